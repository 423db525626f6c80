#!/bin/bash
# rocm-root.sh — the ROCm matrix's root file systems (docs/rocm-matrix.md).
#
# Builds, per entry of configs/rocm-matrix.tsv, a Debian root made with
# `debootstrap --variant=minbase` holding that entry's ROCm runtime, HIP,
# hipcc and tools at the pinned versions, and runs commands inside such a
# root in a private mount namespace (nothing stays mounted, even if killed).
set -euo pipefail

# The caller's loader variables (LD_PRELOAD of the profiler, ...) are meant for
# the command run inside the root, not for this script's host tools: keep
# them aside from the start and restore them for that command only.
for _v in LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT; do
  if [ -n "${!_v+x}" ]; then
    export "ROCM_ROOT_SET_$_v=1" "ROCM_ROOT_SAVED_$_v=${!_v}"
    unset "$_v"
  fi
done
unset _v

SELF=$(readlink -f "${BASH_SOURCE[0]}")
TOP=$(cd "$(dirname "$SELF")/.." && pwd -P)
CONFIG=${ROCM_ROOT_CONFIG:-$TOP/configs/rocm-matrix.tsv}
# snapshot.debian.org is not reachable from the project's machines; where it
# is, a snapshot URL here freezes the archive (Check-Valid-Until is off).
MIRROR=${ROCM_ROOT_MIRROR:-http://deb.debian.org/debian}
# Bump when the way a root is built changes: every root is then rebuilt.
RECIPE=1
STAMP=.rocm-root-stamp
ROOT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

usage() {
  cat <<EOF
usage: scripts/rocm-root.sh COMMAND ...

  build NAME DIR
      Build (or bring up to date) the root of ROCm matrix entry NAME
      ($(entries_list)) in DIR, at the versions pinned in
      configs/rocm-matrix.tsv. Does nothing when DIR's stamp already matches;
      builds in DIR.tmp and renames it into place. Needs root and the network.
      ROCM_ROOT_UNPINNED=1  install the archive's versions instead of the pins
                            and print how they differ from the pins
      ROCM_ROOT_MIRROR=URL  Debian mirror (default http://deb.debian.org/debian)

  run DIR [--bind PATH]... -- CMD [ARGS...]
      Run CMD inside the root DIR, in a private mount namespace, with /proc,
      /sys, /dev, /tmp, the repository ($TOP) and every
      --bind PATH mounted at the same paths; the caller's environment
      (LD_PRELOAD, HSA_TOOLS_LIB, ROCPROF_*, ...) and working directory (when
      it exists inside) are kept. Exits with CMD's exit code. Needs root.

  versions DIR
      Print "package version" for each pinned package installed in DIR, then
      for the toolchain and runtime libraries they use.

  pins NAME DIR
      Print configs/rocm-matrix.tsv lines for entry NAME with the versions
      installed in DIR (to move the pins after ROCM_ROOT_UNPINNED=1).
EOF
}

log() { printf 'rocm-root: %s\n' "$*" >&2; }
die() {
  printf 'rocm-root: error: %s\n' "$1" >&2
  shift
  local l
  for l in "$@"; do printf 'rocm-root:   %s\n' "$l" >&2; done
  exit 1
}
usage_die() {
  printf 'rocm-root: error: %s\n\n' "$1" >&2
  usage >&2
  exit 2
}

need_root() {
  [ "$(id -u)" = 0 ] || die "'$1' must run as root: debootstrap, chroot and mount namespaces need it." \
    "fix: sudo $SELF $1 ..."
  command -v unshare >/dev/null || die "unshare not found." "fix: apt-get install util-linux"
}

# ---- configs/rocm-matrix.tsv -------------------------------------------

entries_list() {
  [ -r "$CONFIG" ] || { echo "?"; return; }
  awk -F'\t' '!/^#/ && NF >= 2 && $1 != "common" && !seen[$1]++ { printf "%s%s", (n++ ? ", " : ""), $1 }' "$CONFIG"
}

# load_entry NAME: sets SUITE, TARGET, EXTRAS[], PATHS[] (dpkg path filter
# lines, in order), PKGS[], VERS[] (VERS "-" = unpinned).
load_entry() {
  local name=$1 e k v line n=0
  [ -r "$CONFIG" ] || die "cannot read the pin file $CONFIG." "fix: run from a rocprof-go checkout, or set ROCM_ROOT_CONFIG"
  SUITE='' TARGET='' EXTRAS=() PATHS=() PKGS=() VERS=()
  while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    case $line in '#'* | '') continue ;; esac
    IFS=$'\t' read -r e k v <<<"$line"
    if [ -z "$e" ] || [ -z "$k" ] || [ -z "$v" ]; then
      die "$CONFIG:$n: expected three tab-separated columns (entry, package, version), got: $line"
    fi
    [ "$e" = "$name" ] || [ "$e" = common ] || continue
    case $k in
      @suite) SUITE=$v ;;
      @target) TARGET=$v ;;
      @extra) EXTRAS+=("$v") ;;
      @path-exclude | @path-include)
        case $v in /*) ;; *) die "$CONFIG:$n: $k takes an absolute glob pattern (dpkg's --path-exclude), got: $v" ;; esac
        PATHS+=("${k#@}=$v") ;;
      @*) die "$CONFIG:$n: unknown setting '$k' (known: @suite, @extra, @target, @path-exclude, @path-include)" ;;
      *) PKGS+=("$k") VERS+=("$v") ;;
    esac
  done <"$CONFIG"
  [ -n "$SUITE" ] || die "no ROCm matrix entry named '$name' in $CONFIG." \
    "known entries: $(entries_list) (5.2 is the host's own ROCm and needs no root)"
}

# The stamp: everything a root is built from. Equal stamps = nothing to do.
stamp_text() {
  local i x
  echo "recipe $RECIPE"
  echo "entry $ENTRY"
  echo "mirror $MIRROR"
  echo "suite $SUITE"
  for x in "${EXTRAS[@]}"; do echo "extra $x"; done
  echo "target ${TARGET:--}"
  # Path filters only act on packages unpacked after them, so a change
  # rebuilds the root from scratch (they are not pkg lines).
  for x in "${PATHS[@]}"; do echo "dpkg $x"; done
  echo "unpinned $UNPINNED"
  for i in "${!PKGS[@]}"; do
    if [ "$UNPINNED" = 1 ]; then echo "pkg ${PKGS[$i]} -"; else echo "pkg ${PKGS[$i]} ${VERS[$i]}"; fi
  done
}

# ---- mounts --------------------------------------------------------------

# safe_rm PATH: remove a (half-)root, refusing when anything is mounted below it.
safe_rm() {
  local p=$1 m
  case $p in / | '' | /usr | /usr/* | /etc | /etc/*) die "refusing to remove '$p'" ;; esac
  [ -e "$p" ] || return 0
  m=$(awk -v p="$p" '{ gsub(/\\040/, " ", $5) } $5 == p || index($5, p "/") == 1 { print $5 }' /proc/self/mountinfo)
  [ -z "$m" ] || die "cannot remove $p: something is mounted below it: $(tr "\n" " " <<<"$m")" "fix: umount -R $p/..., then run again"
  rm -rf --one-file-system -- "$p"
}

# mountpoint_in ROOT PATH: create PATH inside ROOT (a directory, or a file
# for a file), refusing a symbolic link on the way (it would lead outside).
mountpoint_in() {
  local root=$1 path=$2 cur=$1 comp rest
  rest=${path#/}
  while [ -n "$rest" ]; do
    comp=${rest%%/*}
    [ "$comp" = "$rest" ] && rest= || rest=${rest#*/}
    cur=$cur/$comp
    [ ! -L "$cur" ] || die "cannot mount $path inside $root: $cur is a symbolic link there." \
      "fix: bind the path it points to instead"
  done
  if [ -d "$path" ]; then mkdir -p "$root$path"; else
    mkdir -p "$(dirname "$root$path")"
    [ -e "$root$path" ] || : >"$root$path"
  fi
}

# __inner [--minimal] DIR [--bind=PATH]... -- CMD...: runs in the new mount
# namespace; mounts, then execs CMD in the root (the same process all along,
# so signals reach CMD and its exit code is ours).
inner() {
  local minimal=0 dir p
  [ "$1" = --minimal ] && { minimal=1; shift; }
  dir=$1; shift
  local -a binds=()
  while [ "$1" != -- ]; do binds+=("${1#--bind=}"); shift; done
  shift
  if [ $minimal = 0 ]; then
    binds+=(/tmp "$TOP")
    # Parents before children, so a child is not hidden by its parent's bind.
    mapfile -t binds < <(printf '%s\n' "${binds[@]}" | awk '!seen[$0]++ { print length($0) "\t" $0 }' | sort -n -s | cut -f2-)
    for p in "${binds[@]}"; do
      mountpoint_in "$dir" "$p"
      mount --rbind "$p" "$dir$p"
    done
  fi
  for p in /proc /sys /dev; do
    mkdir -p "$dir$p"
    mount --rbind "$p" "$dir$p"
  done
  # Restores the caller's loader variables only for CMD itself (the host's
  # mount and chroot above must not load the caller's LD_PRELOAD).
  # shellcheck disable=SC2016
  exec chroot "$dir" /bin/sh -c '
    cd "${ROCM_ROOT_CWD:-/}" 2>/dev/null || cd /
    for v in LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT; do
      if eval "[ \"\${ROCM_ROOT_SET_$v:-}\" = 1 ]"; then eval "export $v=\"\$ROCM_ROOT_SAVED_$v\""; fi
      unset ROCM_ROOT_SET_$v ROCM_ROOT_SAVED_$v
    done
    unset ROCM_ROOT_CWD v
    exec "$@"' rocm-root "$@"
}

# enter [--minimal] DIR [--bind=PATH]... -- CMD...: exec CMD inside DIR.
enter() {
  export ROCM_ROOT_CWD="$PWD"
  exec unshare --mount --propagation private -- /bin/bash "$SELF" __inner "$@"
}

# in_tmp_root DIR CMD...: run CMD as a build step inside DIR (clean environment).
in_tmp_root() {
  local dir=$1; shift
  (env -i PATH="$ROOT_PATH" HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
    TERM=dumb "$SELF" __enter --minimal "$dir" -- "$@")
}

is_root_dir() { [ -x "$1/bin/sh" ] && [ -d "$1/var/lib/dpkg" ]; }

# ---- build ---------------------------------------------------------------

now() { date +%s; }

# configure DIR: apt sources and settings, no documentation, no services.
configure() {
  local d=$1 x
  {
    echo "deb $MIRROR $SUITE main"
    for x in "${EXTRAS[@]}"; do echo "deb $MIRROR $x main"; done
  } >"$d/etc/apt/sources.list"
  rm -f "$d/etc/apt/sources.list.d/debian.sources"
  cat >"$d/etc/apt/apt.conf.d/90rocm-root" <<'EOF'
// scripts/rocm-root.sh: sid and experimental (and snapshots) may carry
// expired Release files; no recommends, no translations.
Acquire::Check-Valid-Until "false";
Acquire::Languages "none";
APT::Install-Recommends "false";
APT::Install-Suggests "false";
EOF
  mkdir -p "$d/etc/dpkg/dpkg.cfg.d"
  cat >"$d/etc/dpkg/dpkg.cfg.d/90rocm-root-nodoc" <<'EOF'
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
path-exclude=/usr/share/lintian/*
EOF
  # The entry's own filters (@path-exclude/@path-include of the pin file),
  # e.g. the kernel files a library ships for architectures no test runs.
  if [ ${#PATHS[@]} != 0 ]; then
    printf '%s\n' "${PATHS[@]}" >"$d/etc/dpkg/dpkg.cfg.d/91rocm-root-paths"
  else
    rm -f "$d/etc/dpkg/dpkg.cfg.d/91rocm-root-paths"
  fi
  printf '#!/bin/sh\nexit 101\n' >"$d/usr/sbin/policy-rc.d"
  chmod 755 "$d/usr/sbin/policy-rc.d"
  rm -f "$d/etc/resolv.conf"
  cp -L /etc/resolv.conf "$d/etc/resolv.conf"
}

# The in-root part of a build: apt-get update, check the pins, install,
# report the installed versions. Arguments: TARGET UNPINNED ALLOW_DOWNGRADES PKG=VER...
# shellcheck disable=SC2016
APT_STEP='
set -eu
target=$1 unpinned=$2 downgrades=$3; shift 3
apt-get update -q
missing=
for spec in "$@"; do
  p=${spec%%=*} v=${spec#*=}
  [ "$v" != - ] || continue
  # (apt-cache show pkg=missing-version prints nothing and exits 0)
  have=$(apt-cache madison "$p" 2>/dev/null | awk -F"|" "{ gsub(/ /, \"\", \$2); print \$2 }")
  if ! printf "%s\n" "$have" | grep -qxF -- "$v"; then
    have=$(printf "%s\n" "$have" | paste -sd " " -)
    missing="$missing$p $v $have
"
  fi
done
if [ -n "$missing" ]; then
  printf "%s" "$missing" > /tmp/.rocm-root-missing
  [ "$unpinned" = 1 ] || exit 42
fi
# The ROCm packages come from the target release (pkg/release: apt takes
# their dependencies from there only where sid cannot satisfy them; a global
# -t experimental would also pull experimental perl, gdb, ... and conflict).
specs=
for spec in "$@"; do
  p=${spec%%=*} v=${spec#*=}
  if [ "$v" = - ]; then specs="$specs $p"
  elif [ "$unpinned" = 0 ]; then specs="$specs $p=$v"
  elif [ "$target" = - ]; then specs="$specs $p"
  else specs="$specs $p/$target"; fi
done
opts="-y -q -o Dpkg::Use-Pty=0"
[ "$downgrades" = 0 ] || opts="$opts --allow-downgrades"
# shellcheck disable=SC2086
apt-get install $opts $specs
apt-get clean
'

cmd_build() {
  [ $# = 2 ] || usage_die "build takes NAME and DIR"
  need_root build
  command -v debootstrap >/dev/null || die "debootstrap not found." "fix: apt-get install debootstrap"
  ENTRY=$1
  local dir t0 mode=fresh logf i rc
  dir=$(realpath -m -- "$2")
  case $dir in / | /usr | /etc | /tmp | /work) die "refusing to build a root in $dir" "fix: name a new directory, e.g. build/rocm/$ENTRY" ;; esac
  UNPINNED=${ROCM_ROOT_UNPINNED:-0}
  [ "$UNPINNED" = 0 ] || [ "$UNPINNED" = 1 ] || die "ROCM_ROOT_UNPINNED must be 0 or 1, not '$UNPINNED'"
  load_entry "$ENTRY"
  mkdir -p "$(dirname "$dir")"
  exec 9>"$dir.lock"
  flock -n 9 || die "another build of $dir is running (it holds $dir.lock)." "fix: wait for it to finish"

  # A build killed between its two renames leaves the previous root in DIR.old.
  if [ ! -e "$dir" ] && [ -d "$dir.old" ]; then
    log "restoring $dir from $dir.old (an earlier build was interrupted)"
    mv "$dir.old" "$dir"
  fi
  safe_rm "$dir.old"
  if [ -e "$dir.tmp" ]; then
    log "removing $dir.tmp, left by an interrupted build"
    safe_rm "$dir.tmp"
  fi

  local want have
  want=$(stamp_text)
  if [ -e "$dir" ]; then
    [ -f "$dir/$STAMP" ] || die "$dir exists but is not a root built by this script (it has no $STAMP)." \
      "fix: remove it (rm -rf $dir) or name another directory"
    have=$(cat "$dir/$STAMP")
    if [ "$have" = "$want" ]; then
      log "$dir: ROCm $ENTRY root is up to date"
      return 0
    fi
    # Same suites and mirror, no package dropped: upgrade a copy in place.
    if [ "$(grep -Ev '^(pkg|unpinned) ' <<<"$have")" = "$(grep -Ev '^(pkg|unpinned) ' <<<"$want")" ] &&
      [ -z "$(comm -23 <(awk '$1 == "pkg" { print $2 }' <<<"$have" | sort) <(awk '$1 == "pkg" { print $2 }' <<<"$want" | sort))" ]; then
      mode=upgrade
    fi
    log "$dir: the pins changed; $mode:"
    diff <(echo "$have") <(echo "$want") | sed -n 's/^\([<>]\)/  \1/p' >&2 || true
  fi

  logf=$dir.build.log
  : >"$logf"
  t0=$(now)
  local tmp=$dir.tmp
  if [ $mode = upgrade ]; then
    log "[1/3] copying $dir to $tmp"
    cp -a --reflink=auto "$dir" "$tmp"
  else
    log "[1/3] debootstrap --variant=minbase $SUITE into $tmp (log: $logf)"
    if ! unshare --mount --propagation private -- \
      debootstrap --variant=minbase "$SUITE" "$tmp" "$MIRROR" >>"$logf" 2>&1; then
      tail -n 20 "$logf" >&2
      die "debootstrap of $SUITE from $MIRROR failed (log above, whole log in $logf)." \
        "fix: check that the mirror is reachable (ROCM_ROOT_MIRROR) and has the suite"
    fi
    log "      debootstrap took $(($(now) - t0)) s"
  fi
  configure "$tmp"

  local t1 specs=()
  t1=$(now)
  for i in "${!PKGS[@]}"; do specs+=("${PKGS[$i]}=${VERS[$i]}"); done
  log "[2/3] apt-get install ${#PKGS[@]} packages ($([ "$UNPINNED" = 1 ] && echo "archive versions, ROCM_ROOT_UNPINNED=1" || echo pinned)${TARGET:+, ROCm from $TARGET}) (log: $logf)"
  rm -f "$tmp/tmp/.rocm-root-missing"
  rc=0
  in_tmp_root "$tmp" /bin/sh -c "$APT_STEP" apt-step "${TARGET:--}" "$UNPINNED" \
    "$([ $mode = upgrade ] && echo 1 || echo 0)" "${specs[@]}" >>"$logf" 2>&1 || rc=$?
  if [ $rc = 42 ]; then
    local -a lines=()
    while read -r p v avail; do
      lines+=("$p $v is gone; the archive has: ${avail:-no version of it}")
    done <"$tmp/tmp/.rocm-root-missing"
    safe_rm "$tmp"
    die "pinned versions of ROCm $ENTRY are no longer in $MIRROR ($SUITE${EXTRAS[*]:+ + ${EXTRAS[*]}}):" \
      "${lines[@]}" \
      "fix: move the pins: ROCM_ROOT_UNPINNED=1 $SELF build $ENTRY $dir" \
      "     then $SELF pins $ENTRY $dir, and put its lines into $CONFIG"
  elif [ $rc != 0 ]; then
    tail -n 30 "$logf" >&2
    die "installing the packages of ROCm $ENTRY into $tmp failed (log above, whole log in $logf); $tmp is left for inspection and removed by the next build." \
      "fix: read the apt error; a dependency may have moved in $SUITE (try ROCM_ROOT_UNPINNED=1)"
  fi
  log "      packages took $(($(now) - t1)) s"

  # Check: every package installed, at its pin.
  local -a diffs=() bad=()
  local got
  for i in "${!PKGS[@]}"; do
    got=$(dpkg-query --admindir="$tmp/var/lib/dpkg" -W -f='${db:Status-Abbrev}${Version}' "${PKGS[$i]}" 2>/dev/null || true)
    case $got in
      ii\ *) got=${got#ii } ;;
      *) bad+=("${PKGS[$i]}: not installed"); continue ;;
    esac
    [ "${VERS[$i]}" = - ] || [ "$got" = "${VERS[$i]}" ] || diffs+=("${PKGS[$i]}: pinned ${VERS[$i]}, installed $got")
  done
  [ ${#bad[@]} = 0 ] || die "packages missing in $tmp after apt-get install:" "${bad[@]}"
  if [ ${#diffs[@]} != 0 ]; then
    [ "$UNPINNED" = 1 ] || die "apt installed other versions than the pins in $tmp:" "${diffs[@]}"
    log "################################################################################"
    log "ROCM_ROOT_UNPINNED=1: ROCm $ENTRY is NOT at the versions pinned in $CONFIG:"
    for i in "${diffs[@]}"; do log "    $i"; done
    [ ! -s "$tmp/tmp/.rocm-root-missing" ] || {
      log "  (gone from the archive:)"
      sed 's/^/    /' "$tmp/tmp/.rocm-root-missing" >&2
    }
    log "  new pin lines: $SELF pins $ENTRY $dir"
    log "################################################################################"
  elif [ "$UNPINNED" = 1 ]; then
    log "ROCM_ROOT_UNPINNED=1: the archive's versions equal the pins"
  fi
  rm -f "$tmp/tmp/.rocm-root-missing"

  echo "$want" >"$tmp/$STAMP"
  log "[3/3] renaming $tmp to $dir"
  if [ -e "$dir" ]; then
    mv "$dir" "$dir.old"
    mv "$tmp" "$dir"
    safe_rm "$dir.old"
  else
    mv "$tmp" "$dir"
  fi
  log "$dir: ROCm $ENTRY root built in $(($(now) - t0)) s, $(du -sh --one-file-system "$dir" | cut -f1)"
}

# ---- run / versions / pins ----------------------------------------------

cmd_run() {
  [ $# -ge 1 ] || usage_die "run takes DIR, options, -- and a command"
  local dir=$1 b
  shift
  local -a binds=()
  while [ $# -gt 0 ]; do
    case $1 in
      --bind)
        [ $# -ge 2 ] || usage_die "--bind needs a PATH"
        binds+=("$2"); shift 2 ;;
      --bind=*) binds+=("${1#--bind=}"); shift ;;
      --) shift; break ;;
      *) usage_die "run: unexpected '$1' (options go before --, the command after it)" ;;
    esac
  done
  [ $# -ge 1 ] || usage_die "run: no command after --"
  need_root run
  is_root_dir "$dir" || die "$dir is not a root file system (no /bin/sh or dpkg database in it)." \
    "fix: build it: $SELF build NAME $dir"
  dir=$(realpath -- "$dir")
  local -a args=()
  for b in "${binds[@]}"; do
    [ -e "$b" ] || die "--bind $b: no such file or directory"
    args+=("--bind=$(realpath -- "$b")")
  done
  enter "$dir" "${args[@]}" -- "$@"
}

# The pinned packages of the root in DIR (from its stamp).
stamp_pkgs() {
  [ -f "$1/$STAMP" ] || die "$1 has no $STAMP: not a root built by this script." "fix: $SELF build NAME $1"
  awk '$1 == "pkg" { print $2 }' "$1/$STAMP"
}

cmd_versions() {
  [ $# = 1 ] || usage_die "versions takes DIR"
  local dir=$1 p
  local -a pkgs
  [ -f "$dir/$STAMP" ] || die "$dir has no $STAMP: not a root built by this script." "fix: $SELF build NAME $dir"
  mapfile -t pkgs < <(stamp_pkgs "$dir")
  # The pinned packages, then what they run on or compile with.
  local -a extra
  mapfile -t extra < <(dpkg-query --admindir="$dir/var/lib/dpkg" -W -f='${db:Status-Abbrev} ${Package}\n' \
    'libc6' 'libstdc++6' 'libdrm2' 'libdrm-amdgpu1' 'libnuma1' 'libelf1*' 'clang-[0-9]*' 'lld-[0-9]*' \
    'libllvm[0-9]*' 'gcc-[0-9]*' 'libhsakmt1' 'libhiprtc*' 2>/dev/null |
    awk '$1 == "ii" && $2 !~ /-base$|-linux-gnu$/ { print $2 }')
  for p in "${pkgs[@]}" "${extra[@]}"; do
    printf '%s ' "$p"
    dpkg-query --admindir="$dir/var/lib/dpkg" -W -f='${Version}\n' "$p" 2>/dev/null || echo "(not-installed)"
  done | awk '!seen[$1]++'
}

cmd_pins() {
  [ $# = 2 ] || usage_die "pins takes NAME and DIR"
  ENTRY=$1
  local dir=$2 i v x
  load_entry "$ENTRY"
  printf '%s\t@suite\t%s\n' "$ENTRY" "$SUITE"
  for x in "${EXTRAS[@]}"; do printf '%s\t@extra\t%s\n' "$ENTRY" "$x"; done
  [ -z "$TARGET" ] || printf '%s\t@target\t%s\n' "$ENTRY" "$TARGET"
  for x in "${PATHS[@]}"; do printf '%s\t@%s\t%s\n' "$ENTRY" "${x%%=*}" "${x#*=}"; done
  for i in "${!PKGS[@]}"; do
    [ "${VERS[$i]}" != - ] || continue
    v=$(dpkg-query --admindir="$dir/var/lib/dpkg" -W -f='${Version}' "${PKGS[$i]}" 2>/dev/null) ||
      die "${PKGS[$i]} is not installed in $dir"
    printf '%s\t%s\t%s\n' "$ENTRY" "${PKGS[$i]}" "$v"
  done
}

main() {
  [ $# -ge 1 ] || usage_die "no command"
  local cmd=$1
  shift
  case $cmd in
    build) cmd_build "$@" ;;
    run) cmd_run "$@" ;;
    versions) cmd_versions "$@" ;;
    pins) cmd_pins "$@" ;;
    -h | --help | help) usage ;;
    __inner) inner "$@" ;;
    __enter) enter "$@" ;;
    *) usage_die "unknown command '$cmd'" ;;
  esac
}

main "$@"
