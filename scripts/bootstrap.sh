#!/usr/bin/env bash
# Install every Debian package that ergon's build, tests and main job need.
# Idempotent and fast when everything is present: it asks apt only for what
# dpkg says is missing. Run as root (or with sudo available).
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libjansson-dev libsodium-dev libyaml-dev libserialport-dev libcmocka-dev
  clang libclang-rt-14-dev       # libFuzzer targets, sanitizer runtimes
  gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm  # target runtime, Cortex-M55 under QEMU
  python3                         # bench generators and docs checks
  bsdutils                        # script(1): the TTY progress test (tests/functional/test_run_cli.sh)
  chromium                        # the browser tests of ergon report and ergon view (headless, network disabled)
  libssl-dev                      # libcrypto: SHA-256 with the CPU's SHA instructions
  man-db                          # man pages (tests/functional/test_man_pages.sh reads them)
  zsh                             # the zsh completion's syntax check (test_install.sh)
  libsqlite3-dev libpq-dev postgresql  # ergon db backends; CI's loopback PostgreSQL
  openocd                         # the openocd lifecycle's TCL client, tested against the real one
  libxml2-utils                   # xmllint: ergon validate's JUnit XML checked against tests/functional/junit.xsd
  procps                          # pgrep: test_run_faults.sh waits for the hanging invocation's child
  libmicrohttpd-dev               # ergon view --serve: the HTTP server on 127.0.0.1 (optional at build time)
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user  # the interpreter's NEON path, cross-built and run under qemu-aarch64 (unit/test_tfl_neon_qemu)
)

# Node for the browser tests of `ergon view` (tests/browser: playwright-core
# drives the chromium above). Debian's nodejs and npm, unless a node with
# its npm is already installed (a NodeSource nodejs bundles npm and
# conflicts with Debian's npm package).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  PACKAGES+=(nodejs npm)
fi

# The npm packages of tests/browser (package-lock.json, pinned), into its
# git-ignored node_modules; --ignore-scripts: nothing runs at install and
# no browser is downloaded (the tests use Debian's chromium).
npm_deps() {
  local dir want have
  dir="$(cd "$(dirname "$0")/.." && pwd)/tests/browser"
  want=$(sed -n 's/.*"playwright-core": "\([^"]*\)".*/\1/p' "$dir/package.json" | head -1)
  have=""
  if [ -f "$dir/node_modules/playwright-core/package.json" ]; then
    have=$(sed -n 's/^  "version": "\([^"]*\)".*/\1/p' "$dir/node_modules/playwright-core/package.json" | head -1)
  fi
  if [ -n "$want" ] && [ "$want" = "$have" ]; then
    echo "bootstrap: tests/browser: playwright-core $have present"
    return 0
  fi
  echo "bootstrap: tests/browser: npm ci (playwright-core $want)"
  (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
}

missing=()
for p in "${PACKAGES[@]}"; do
  [[ "$p" == \#* ]] && continue
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "bootstrap: all ${#PACKAGES[@]} packages present"
  npm_deps
  exit 0
fi

echo "bootstrap: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
npm_deps
