package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cidx/cidx/internal/app"
	"github.com/cidx/cidx/internal/auth"
	"github.com/cidx/cidx/internal/gitcli"
	"github.com/cidx/cidx/internal/jobs"
	"github.com/cidx/cidx/internal/repos"
)

// cliUser is recorded as the submitter of jobs started from the command line.
const cliUser = "admin"

func repoCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "repo", Short: "Manage golden repositories"}
	var branch string
	var noWait bool
	add := &cobra.Command{
		Use:   "add ALIAS SOURCE",
		Short: "Register, clone and index a repository; users read it as ALIAS-global",
		Long:  "SOURCE is a git URL or a local path to a git repository. Waits until the repository is cloned and indexed, then prints ALIAS-global.",
		Args:  exactArgs("ALIAS", "SOURCE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(cmd, g, func(ctx context.Context, a *app.App) error {
				j, err := a.Repos.Add(ctx, cliUser, args[0], localSource(args[1]), branch)
				if err != nil {
					return err
				}
				return finish(ctx, cmd, a, j, noWait, args[0]+repos.GlobalSuffix)
			})
		},
	}
	add.Flags().StringVar(&branch, "branch", "", "branch to serve (default: the repository's default branch)")
	add.Flags().BoolVar(&noWait, "no-wait", false, "return once the job is queued; a running server clones it")

	list := &cobra.Command{
		Use:   "list",
		Short: "List golden repositories",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withApp(cmd, g, func(ctx context.Context, a *app.App) error {
				all, err := a.Repos.List(ctx)
				if err != nil {
					return err
				}
				w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "ALIAS\tSTATE\tBRANCH\tCOMMIT\tFILES\tSOURCE")
				for _, r := range all {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\n", r.GlobalAlias(), r.State, r.Branch, short(r.Commit), r.Stats.Files, gitcli.Redact(r.Source))
				}
				return w.Flush()
			})
		},
	}
	var removeNoWait, refreshNoWait bool
	remove := &cobra.Command{
		Use:   "remove ALIAS",
		Short: "Remove a golden repository, its snapshots and catalog entry",
		Args:  exactArgs("ALIAS"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(cmd, g, func(ctx context.Context, a *app.App) error {
				j, err := a.Repos.Remove(ctx, cliUser, args[0])
				if err != nil {
					return err
				}
				return finish(ctx, cmd, a, j, removeNoWait, "removed "+strings.TrimSuffix(args[0], repos.GlobalSuffix))
			})
		},
	}
	remove.Flags().BoolVar(&removeNoWait, "no-wait", false, "return once the job is queued")
	refresh := &cobra.Command{
		Use:   "refresh ALIAS",
		Short: "Fetch the repository's branch and fast-forward to its new tip",
		Args:  exactArgs("ALIAS"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(cmd, g, func(ctx context.Context, a *app.App) error {
				j, err := a.Repos.Refresh(ctx, cliUser, args[0])
				if err != nil {
					return err
				}
				return finish(ctx, cmd, a, j, refreshNoWait, "")
			})
		},
	}
	refresh.Flags().BoolVar(&refreshNoWait, "no-wait", false, "return once the job is queued")
	cmd.AddCommand(add, list, remove, refresh)
	return cmd
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// finish runs the job in this process (or waits for a server that claimed
// it first) unless noWait, then prints done on success.
func finish(ctx context.Context, cmd *cobra.Command, a *app.App, j jobs.Job, noWait bool, done string) error {
	if noWait {
		fmt.Fprintf(cmd.ErrOrStderr(), "queued job %s (%s); a running 'cidx serve' on this data directory runs it\n", j.ID, j.Op)
		fmt.Fprintln(cmd.OutOrStdout(), j.ID)
		return nil
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "running job %s (%s)...\n", j.ID, j.Op)
	res, err := a.Jobs.RunNow(ctx, j.ID)
	if err != nil {
		return err
	}
	if res.Status != jobs.Completed {
		msg := res.Status
		if res.Error != nil {
			msg = *res.Error
		}
		return fmt.Errorf("job %s failed: %s", j.ID, msg)
	}
	if done == "" {
		var r struct{ Message string }
		json.Unmarshal(res.Result, &r)
		done = r.Message
	}
	fmt.Fprintln(cmd.OutOrStdout(), done)
	return nil
}

func withApp(cmd *cobra.Command, g *globals, f func(ctx context.Context, a *app.App) error) error {
	ctx := cmd.Context()
	a, err := g.open(ctx, true)
	if err != nil {
		return err
	}
	defer a.Close()
	return f(ctx, a)
}

func userCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "user", Short: "Manage users"}
	var role string
	var pwStdin bool
	add := &cobra.Command{
		Use:   "add NAME",
		Short: "Create a user (password from --password-stdin, else generated and printed once)",
		Args:  exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if role == "" {
				return fmt.Errorf("--role is required: normal_user, power_user or admin")
			}
			r, err := auth.ParseRole(role)
			if err != nil {
				return err
			}
			password, generated := "", false
			if pwStdin {
				password, err = readSecret(cmd.InOrStdin())
				if err != nil {
					return err
				}
			} else {
				password, generated = auth.GeneratePassword(), true
			}
			return withApp(cmd, g, func(ctx context.Context, a *app.App) error {
				u, err := a.Auth.CreateUser(ctx, args[0], r, password)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "created user %s (%s)\n", u.Name, u.Role)
				if generated {
					fmt.Fprintf(cmd.ErrOrStderr(), "generated password (shown once):\n")
					fmt.Fprintln(cmd.OutOrStdout(), password)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "give it a token: cidx token create %s\n", u.Name)
				return nil
			})
		},
	}
	add.Flags().StringVar(&role, "role", "", "normal_user, power_user or admin")
	add.Flags().BoolVar(&pwStdin, "password-stdin", false, "read the password from standard input")
	list := &cobra.Command{
		Use:   "list",
		Short: "List users",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withApp(cmd, g, func(ctx context.Context, a *app.App) error {
				users, err := a.Auth.ListUsers(ctx)
				if err != nil {
					return err
				}
				w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "NAME\tROLE\tCREATED")
				for _, u := range users {
					fmt.Fprintf(w, "%s\t%s\t%s\n", u.Name, u.Role, u.CreatedAt)
				}
				return w.Flush()
			})
		},
	}
	remove := &cobra.Command{
		Use:   "remove NAME",
		Short: "Delete a user and all of their tokens",
		Args:  exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(cmd, g, func(ctx context.Context, a *app.App) error {
				if err := a.Auth.RemoveUser(ctx, args[0]); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "removed user %s\n", args[0])
				return nil
			})
		},
	}
	cmd.AddCommand(add, list, remove)
	return cmd
}

func readSecret(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("read password from standard input: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", fmt.Errorf("no password on standard input")
	}
	return line, nil
}

func tokenCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "Manage bearer tokens"}
	var label string
	create := &cobra.Command{
		Use:   "create USER",
		Short: "Create a bearer token; prints it alone on standard output, once",
		Args:  exactArgs("USER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(cmd, g, func(ctx context.Context, a *app.App) error {
				secret, t, err := a.Auth.CreateToken(ctx, args[0], label)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "created token %s for %s; it is shown once and stored only as a hash\n", t.ID, t.User)
				fmt.Fprintln(cmd.OutOrStdout(), secret)
				return nil
			})
		},
	}
	create.Flags().StringVar(&label, "name", "", "label to recognise the token by")
	list := &cobra.Command{
		Use:   "list USER",
		Short: "List a user's tokens (never the secrets)",
		Args:  exactArgs("USER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(cmd, g, func(ctx context.Context, a *app.App) error {
				tokens, err := a.Auth.ListTokens(ctx, args[0])
				if err != nil {
					return err
				}
				w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "ID\tNAME\tCREATED")
				for _, t := range tokens {
					fmt.Fprintf(w, "%s\t%s\t%s\n", t.ID, t.Label, t.CreatedAt)
				}
				return w.Flush()
			})
		},
	}
	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a token by id (see token list)",
		Args:  exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(cmd, g, func(ctx context.Context, a *app.App) error {
				if err := a.Auth.RevokeToken(ctx, args[0]); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "revoked token %s\n", args[0])
				return nil
			})
		},
	}
	cmd.AddCommand(create, list, revoke)
	return cmd
}
