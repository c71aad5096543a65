#!/usr/bin/env bash
# Installs what vkxla needs on a Debian machine, idempotently: a quick no-op when
# everything is already there. Run as root (or with sudo available).
set -euo pipefail

packages=(mesa-vulkan-drivers libvulkan-dev vulkan-validationlayers spirv-tools
  spirv-headers glslc g++ vulkan-tools libopenmpi-dev openmpi-bin pkg-config)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v go >/dev/null 2>&1; then
  echo "setup: Go is not on PATH (expected Go 1.26 at /usr/local/go)" >&2
  exit 1
fi
