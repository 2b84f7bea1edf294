#!/usr/bin/env bash
# The README's two commands on a fresh Debian 12 machine: build a minbase
# bookworm chroot with debootstrap, put a clean clone of this checkout's
# committed HEAD in it with ../shared beside it (/work/ergon, /work/shared),
# and run scripts/demo.sh and then scripts/test.sh inside, as root, with
# nothing installed by hand. Prints each command's exit status and time;
# exits 1 when either failed (docs/internals/testing.md says when to run it).
#
#   scripts/fresh-check.sh                      a truly fresh chroot (downloads every package)
#   scripts/fresh-check.sh --cache ~/.cache/ergon-fresh   reuse the minbase tarball (and .debs)
#
# Options:
#   --cache DIR    keep debootstrap's minbase tarball in DIR (made on the
#                  first run with --make-tarball, unpacked after) and the
#                  .debs the README commands install (DIR/apt-archives,
#                  bind-mounted on the chroot's /var/cache/apt/archives):
#                  the packages are still installed fresh in a new chroot,
#                  only their download is saved. Default: no cache.
#   --mirror URL   the Debian mirror (default: this machine's apt source
#                  for bookworm, else http://deb.debian.org/debian)
#   --logs DIR     where the logs go (default build-fresh/ in this checkout)
#   --keep         keep the chroot (printed) instead of removing it
#   --only demo|test   run one of the two commands
#
# Uncommitted changes are NOT checked: the chroot gets `git clone` of the
# commit HEAD names (the script says so when the tree is dirty). It needs
# root (it re-runs itself with sudo) and runs in its own mount namespace
# (unshare), so every mount it makes (/proc, /sys, /dev, /dev/pts,
# /dev/shm) goes away with it even if it is killed; on exit, Ctrl-C
# included, it also stops what it started inside the chroot and unmounts
# before removing the chroot (after a SIGKILL, what runs inside is left
# running). Needs about 8 GB free under /var/tmp.
set -euo pipefail

args=("$@") # for the re-runs under sudo and unshare
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }
cache="" mirror="" logs="" keep=0 only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --cache) cache=${2:?--cache needs a folder}; shift 2 ;;
    --mirror) mirror=${2:?--mirror needs a URL}; shift 2 ;;
    --logs) logs=${2:?--logs needs a folder}; shift 2 ;;
    --keep) keep=1; shift ;;
    --only)
      case "${2:-}" in demo|test) only=$2 ;; *) echo "fresh-check: --only takes demo or test, not '${2:-}'" >&2; exit 2 ;; esac
      shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "fresh-check: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

here=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "fresh-check: needs root (debootstrap, chroot, mount) and there is no sudo" >&2; exit 2; }
  exec sudo -- "$0" "${args[@]}"
fi
# A private mount namespace: the mounts below vanish with this process.
if [ "${ERGON_FRESH_NS:-}" != 1 ]; then
  ERGON_FRESH_NS=1 exec unshare --mount --propagation private -- "$0" "${args[@]}"
fi

# --cache and --logs are relative to where the script was started.
if [ -n "$cache" ]; then
  mkdir -p "$cache/apt-archives/partial"
  cache=$(cd "$cache" && pwd)
fi
logs=${logs:-$here/build-fresh}
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
cd "$here"
commit=$(git rev-parse HEAD)
shared=$(cd "${ERGON_SHARED_DIR:-$here/../shared}" 2>/dev/null && pwd) ||
  { echo "fresh-check: no shared fixtures at ${ERGON_SHARED_DIR:-$here/../shared} (set ERGON_SHARED_DIR)" >&2; exit 2; }
[ -d "$shared/fixtures" ] || { echo "fresh-check: $shared has no fixtures/ folder" >&2; exit 2; }
say() { echo "fresh-check: $*" | tee -a "$logs/summary.txt"; }
: >"$logs/summary.txt"
say "commit $commit ($(git log -1 --format=%s "$commit" | cut -c1-60))"
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  say "WARNING: this checkout has uncommitted changes; they are NOT in the check (it clones $commit)"
fi

if ! command -v debootstrap >/dev/null; then
  echo "fresh-check: installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >/dev/null
fi

# The mirror this machine's apt uses for bookworm (one-line or deb822 form).
apt_uri() { # apt_uri SUITE: the first http(s) URI serving SUITE
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    case "$f" in
      *.sources) awk -v s="$1" '
          /^[[:space:]]*$/ { if (u && ok) { print u; exit } u = ""; ok = 0; next }
          tolower($1) == "uris:" { u = $2 }
          tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == s) ok = 1 }
          END { if (u && ok) print u }' "$f" ;;
      *) awk -v s="$1" '$1 == "deb" { for (i = 2; i < NF; i++) if ($i ~ /^https?:/ && $(i+1) == s) { print $i; exit } }' "$f" ;;
    esac
  done | head -1
}
mirror=${mirror:-$(apt_uri bookworm)}
mirror=${mirror:-http://deb.debian.org/debian}
security=$(apt_uri bookworm-security)
security=${security:-http://deb.debian.org/debian-security}

work=$(mktemp -d /var/tmp/ergon-fresh-XXXXXX)
root=$work/root
mounts=()
running=""

cleanup() {
  local rc=$? p n
  trap - EXIT INT TERM
  set +e
  # What the commands started inside the chroot (a server, a simulator)
  # and left running, or all of it after Ctrl-C: the processes whose root
  # is the chroot or whose program is in it; then the one waiting for them.
  for n in TERM KILL; do
    for p in /proc/[0-9]*; do
      if [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] ||
        case "$(readlink "$p/exe" 2>/dev/null)" in "$root"/*) true ;; *) false ;; esac; then
        kill -s "$n" "${p#/proc/}" 2>/dev/null
      fi
    done
    [ "$n" = TERM ] && sleep 2
  done
  [ -n "$running" ] && kill "$running" 2>/dev/null && wait "$running" 2>/dev/null
  # Ours in reverse, then anything else still mounted below the chroot
  # (debootstrap's, if it was interrupted), deepest first.
  for ((n = ${#mounts[@]} - 1; n >= 0; n--)); do
    umount "${mounts[n]}" 2>/dev/null || umount -l "${mounts[n]}" 2>/dev/null || true
  done
  awk -v r="$root/" 'index($2, r) == 1 { print $2 }' /proc/self/mounts | sort -r |
    while read -r p; do umount "$p" 2>/dev/null || umount -l "$p" 2>/dev/null || true; done
  if [ "$keep" = 1 ]; then
    echo "fresh-check: kept the chroot at $root"
  else
    rm -rf --one-file-system "$work"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "fresh-check: interrupted" >&2; exit 130' INT
trap 'exit 143' TERM

mnt() { # mnt ARGS... TARGET: mount, and remember TARGET for the cleanup
  mount "$@"
  mounts+=("${!#}")
}

say "mirror $mirror, chroot $root"
arch=$(dpkg --print-architecture)
t0=$SECONDS
db_args=(--variant=minbase --arch="$arch")
if [ -n "$cache" ]; then
  tarball=$cache/bookworm-minbase-$arch.tgz
  if [ ! -f "$tarball" ]; then
    say "caching the minbase packages in $tarball"
    debootstrap "${db_args[@]}" --make-tarball="$tarball.part" bookworm "$work/tarball" "$mirror" \
      >"$logs/debootstrap.log" 2>&1 || { tail -20 "$logs/debootstrap.log"; say "debootstrap --make-tarball failed"; exit 1; }
    mv "$tarball.part" "$tarball"
  fi
  db_args+=(--unpack-tarball="$tarball")
fi
if ! debootstrap "${db_args[@]}" bookworm "$root" "$mirror" >>"$logs/debootstrap.log" 2>&1; then
  tail -20 "$logs/debootstrap.log"
  say "debootstrap failed (log: $logs/debootstrap.log)"
  exit 1
fi
say "debootstrap --variant=minbase bookworm: $((SECONDS - t0)) s"

# What a fresh Debian 12 install has besides the packages: its apt
# sources (with updates and security), name resolution and /etc/hosts.
cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security bookworm-security main
EOF
cp /etc/resolv.conf "$root/etc/resolv.conf"
printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
# No service starts from the chroot (a package's postinst would start it on
# this machine's network, e.g. postgresql's cluster on port 5432); the
# suite starts its own server (scripts/pg_start.sh).
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"

mkdir -p "$root/work"
git clone -q --no-checkout --no-hardlinks "$here" "$root/work/ergon"
git -C "$root/work/ergon" checkout -q --detach "$commit"
cp -a "$shared" "$root/work/shared"

mnt -t proc proc "$root/proc"
mnt -t sysfs -o ro,nosuid,nodev,noexec sysfs "$root/sys"
mnt -t tmpfs -o mode=755,nosuid tmpfs "$root/dev"
for d in null zero full random urandom tty; do
  touch "$root/dev/$d"
  mnt --bind "/dev/$d" "$root/dev/$d"
done
mkdir -p "$root/dev/pts" "$root/dev/shm"
mnt -t devpts -o newinstance,ptmxmode=0666,mode=620,gid=5 devpts "$root/dev/pts"
ln -s pts/ptmx "$root/dev/ptmx"
mnt -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/dev/shm"
ln -s /proc/self/fd "$root/dev/fd"
ln -s /proc/self/fd/0 "$root/dev/stdin"
ln -s /proc/self/fd/1 "$root/dev/stdout"
ln -s /proc/self/fd/2 "$root/dev/stderr"
if [ -n "$cache" ]; then
  mnt --bind "$cache/apt-archives" "$root/var/cache/apt/archives"
fi

# One README command inside, as root, with a clean environment. It runs in
# the background and the script waits for it: a wait is cut short by
# Ctrl-C or TERM, whose trap then cleans up (a foreground command would
# first run to its end; apt-get, for one, exits 0 after an interrupt).
inside() { # inside NAME: scripts/NAME.sh in the clone; sets rc_NAME, s_NAME
  local name=$1 t=$SECONDS rc
  say "running scripts/$name.sh (log: $logs/$name.log)"
  rm -f "$work/$name.rc"
  (
    chroot "$root" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      bash -c "cd /work/ergon && scripts/$name.sh" </dev/null 2>&1 | tee "$logs/$name.log"
    echo "${PIPESTATUS[0]}" >"$work/$name.rc"
  ) &
  running=$!
  wait "$running" || true
  running=""
  rc=$(cat "$work/$name.rc" 2>/dev/null || echo 1)
  printf -v "rc_$name" %s "$rc"
  printf -v "s_$name" %s "$((SECONDS - t))"
}
ran=()
for name in demo test; do
  [ -n "$only" ] && [ "$only" != "$name" ] && continue
  inside "$name"
  ran+=("$name")
done

status=0
for name in "${ran[@]}"; do
  rc_var=rc_$name s_var=s_$name
  say "scripts/$name.sh: exit ${!rc_var}, $((${!s_var} / 60)) min $((${!s_var} % 60)) s"
  [ "${!rc_var}" = 0 ] || status=1
done
[ "$status" = 0 ] && say "PASS: the README commands pass on a fresh minbase Debian 12 ($commit)" ||
  say "FAIL: see the logs in $logs"
exit "$status"
