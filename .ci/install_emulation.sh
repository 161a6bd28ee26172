#!/usr/bin/env bash
# Installs the emulation lab (benchmarks/targets_lab.py, tests/test_emulated_targets.py): qemu-user, a
# cross C compiler for the aarch64 allocation tracer, and an aarch64 sysroot holding Debian's arm64
# python3.11 (extracted with dpkg -x, never installed) with the aarch64 wheels of ai-edge-litert,
# numpy and ml_dtypes at the host's versions. Everything comes from the package registries (apt-get, pip). Idempotent:
# a complete sysroot is kept (delete it, or set EMULATION_REFRESH=1, to rebuild it).
#
# Usage: .ci/install_emulation.sh [SYSROOT]
#   SYSROOT defaults to $TFLITE_FLOPS_SYSROOT, else ${XDG_CACHE_HOME:-~/.cache}/tflite_flops/aarch64-sysroot.
#   PYTHON (default python3): the host interpreter whose ai-edge-litert and numpy versions are matched.
set -euo pipefail

SYSROOT="${1:-${TFLITE_FLOPS_SYSROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/tflite_flops/aarch64-sysroot}}"
PYTHON="${PYTHON:-python3}"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"

# The arm64 packages python3.11 needs at run time (its Depends, recursively), and libstdc++ for the wheels.
ARM_PACKAGES="libc6 gcc-12-base libgcc-s1 libstdc++6 python3.11-minimal libpython3.11-minimal libpython3.11-stdlib
  libbz2-1.0 libcom-err2 libcrypt1 libdb5.3 libexpat1 libffi8 libgssapi-krb5-2 libk5crypto3 libkeyutils1 libkrb5-3
  libkrb5support0 liblzma5 libncursesw6 libnsl2 libreadline8 libsqlite3-0 libssl3 libtinfo6 libtirpc3 libuuid1
  zlib1g"

need_host=()
command -v qemu-aarch64 >/dev/null || need_host+=(qemu-user)
command -v aarch64-linux-gnu-gcc >/dev/null || need_host+=(gcc-aarch64-linux-gnu)
command -v cc >/dev/null || need_host+=(gcc)
command -v addr2line >/dev/null || need_host+=(binutils)
updated=0
if [ ${#need_host[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  updated=1
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_host[@]}" >/dev/null
fi

versions=$("$PYTHON" - <<'EOF'
from importlib.metadata import version
# ml_dtypes: litert-benchmark's (the wheel's benchmark tool, the emulated phone of tests/test_phone_flow.py)
print(f"ai-edge-litert=={version('ai-edge-litert')} numpy=={version('numpy')} ml_dtypes=={version('ml_dtypes')}")
EOF
)
stamp="$SYSROOT/.installed"
if [ "${EMULATION_REFRESH:-0}" != 1 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$versions" ]; then
  echo "emulation sysroot ready: $SYSROOT ($versions)"
  exit 0
fi

if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $SUDO dpkg --add-architecture arm64
  updated=0
fi
[ "$updated" = 1 ] || $SUDO apt-get update -qq

work=$(mktemp -d)
chmod 755 "$work"  # apt-get download runs as the _apt user where it can
trap 'rm -rf "$work"' EXIT
rm -rf "$SYSROOT"
mkdir -p "$SYSROOT"
(
  cd "$work"
  # shellcheck disable=SC2086
  apt-get download -qq $(for p in $ARM_PACKAGES; do printf '%s:arm64 ' "$p"; done)
  for deb in ./*.deb; do dpkg -x "$deb" "$SYSROOT"; done
)
# Debian's python3.11 reads its packages from <prefix>/lib/python3/dist-packages, the prefix being where
# the executable lies: the sysroot's usr
site="$SYSROOT/usr/lib/python3/dist-packages"
mkdir -p "$site"
for requirement in $versions; do
  # the host's version; numpy, if that one has no wheel for Python 3.11, the newest that has
  "$PYTHON" -m pip download --quiet --no-deps --platform manylinux_2_27_aarch64 --only-binary=:all: \
    --python-version 3.11 -d "$work/wheels" "$requirement" \
    || { [ "${requirement%%==*}" = numpy ] && "$PYTHON" -m pip download --quiet --no-deps \
           --platform manylinux_2_27_aarch64 --only-binary=:all: --python-version 3.11 -d "$work/wheels" numpy; }
done
for wheel in "$work"/wheels/*.whl; do
  "$PYTHON" -m zipfile -e "$wheel" "$site"
done
echo "$versions" > "$stamp"
echo "emulation sysroot installed: $SYSROOT ($versions)"
