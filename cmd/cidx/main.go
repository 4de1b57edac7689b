// Command cidx is a multi-user MCP server that gives AI agents governed
// access to an organisation's git repositories.
//
//	cidx serve [--data-dir DIR] [--http ADDR] [--stdio] [--user NAME]
//	cidx repo add|list|remove|refresh ...
//	cidx user add|list|remove ...
//	cidx token create|list|revoke ...
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cidx/cidx/internal/app"
	"github.com/cidx/cidx/internal/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := root().ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cidx:", err)
		os.Exit(1)
	}
}

// globals are the flags every command takes.
type globals struct {
	dataDir  string
	logLevel string
}

func root() *cobra.Command {
	g := &globals{}
	cmd := &cobra.Command{
		Use:           "cidx",
		Short:         "MCP server for governed access to git repositories",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.PersistentFlags().StringVar(&g.dataDir, "data-dir", "", "data directory (default $CIDX_DATA_DIR, else ~/.cidx)")
	cmd.PersistentFlags().StringVar(&g.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	cmd.AddCommand(serveCmd(g), repoCmd(g), userCmd(g), tokenCmd(g), versionCmd())
	return cmd
}

func (g *globals) logger() *slog.Logger {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(g.logLevel)); err != nil {
		lvl = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
}

// open opens the data directory's services. CLI commands log only warnings
// so their output stays readable.
func (g *globals) open(ctx context.Context, quiet bool) (*app.App, error) {
	dir, err := config.DataDir(g.dataDir)
	if err != nil {
		return nil, err
	}
	log := g.logger()
	if quiet && g.logLevel == "info" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return app.Open(ctx, dir, log)
}

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run:   func(cmd *cobra.Command, _ []string) { fmt.Fprintln(cmd.OutOrStdout(), "cidx", app.Version) },
	}
}

// exactArgs is cobra.ExactArgs with a message that names the arguments.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != len(names) {
			return fmt.Errorf("%s takes %d argument(s): %s (got %d); see --help", cmd.CommandPath(), len(names), strings.Join(names, " "), len(args))
		}
		return nil
	}
}
