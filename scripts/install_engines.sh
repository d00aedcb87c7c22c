#!/usr/bin/env bash
# Installs the engines that Debian 12 does not package, into a folder of the build, where the
# backend folders look for them:
#
#   scripts/install_engines.sh BUILD_DIR      → BUILD_DIR/engines/
#
# What to install comes from each backend folder's dependencies file (backends/*/dependencies,
# format in scripts/backend_dependencies.sh): its pinned PyPI wheels (`pip`), files of the
# Debian archive checked by SHA-256 (`deb`) and links to the libraries (`link`). Only the
# native libraries of the wheels are used (no Python module is imported), so they are
# installed without their Python dependencies.
#
# Fast when everything is there. Where the package index or the archive cannot be reached,
# it says so and exits 0: the build then skips those backends, with a message.
# COLLAGE_ENGINES=none skips this script.
set -euo pipefail

BUILD_DIR=${1:?usage: install_engines.sh BUILD_DIR}
if [[ "${COLLAGE_ENGINES:-}" == "none" ]]; then
  exit 0
fi
source "$(dirname "${BASH_SOURCE[0]}")/backend_dependencies.sh"
check_backend_dependencies
ENGINES="$BUILD_DIR/engines"
mkdir -p "$ENGINES"
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

mapfile -t wheel_lines < <(backend_dependencies pip)
mapfile -t deb_lines < <(backend_dependencies deb)
mapfile -t link_lines < <(backend_dependencies link)
read -r -a wheels <<< "${wheel_lines[*]:-}"

PYTHON=$(command -v python3)
STAMP="$ENGINES/.installed"
want="${wheels[*]:-} | ${deb_lines[*]:-} | ${link_lines[*]:-} | $($PYTHON -c 'import sys; print(sys.version_info[:2])')"
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; then
  exit 0
fi

warn() { echo "install_engines.sh: $*; the engines' backends will be skipped" >&2; }

# The wheels: --no-deps because only their shared libraries are used.
if [[ ${#wheels[@]} -gt 0 ]] &&
   ! "$PYTHON" -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps \
       --no-warn-script-location --prefix "$ENGINES" "${wheels[@]}"; then
  warn "pip could not install ${wheels[*]}"
  exit 0
fi

for entry in "${link_lines[@]}"; do
  read -r pattern name <<< "$entry"
  # The glob is expanded here, under engines/; no match leaves the backend to say it is missing.
  target=$(compgen -G "$ENGINES/$pattern" | head -1 || true)
  if [[ -n "$target" ]]; then
    ln -sf "$(basename "$target")" "$(dirname "$target")/$name"
  fi
done

for entry in "${deb_lines[@]}"; do
  read -r archive_path sha256 from to <<< "$entry"
  dest="$ENGINES/$to"
  # Unpacked before from this very archive: nothing to do.
  if [[ -f "$dest.from" && "$(cat "$dest.from")" == "$archive_path" ]]; then
    continue
  fi
  deb="$ENGINES/download.deb"
  if ! curl -fsSL -o "$deb" "$DEBIAN_MIRROR/$archive_path"; then
    warn "could not download $DEBIAN_MIRROR/$archive_path"
    rm -f "$deb"
    exit 0
  fi
  if ! echo "$sha256  $deb" | sha256sum -c --quiet -; then
    warn "$archive_path does not have the expected SHA-256"
    rm -f "$deb"
    exit 0
  fi
  unpacked="$ENGINES/unpacked-deb"
  rm -rf "$unpacked"
  dpkg-deb -x "$deb" "$unpacked"
  if [[ ! -d "$unpacked/$from" ]]; then
    warn "$archive_path has no folder $from"
    rm -rf "$unpacked" "$deb"
    exit 0
  fi
  mkdir -p "$(dirname "$dest")"
  rm -rf "$dest"
  mv "$unpacked/$from" "$dest"
  echo "$archive_path" > "$dest.from"
  rm -rf "$unpacked" "$deb"
done
echo "$want" > "$STAMP"
