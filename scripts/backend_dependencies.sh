# What the backend folders need installed, each in its own file, backends/<name>/dependencies,
# so that adding a backend edits no list here. Sourced by install_deps.sh and
# install_engines.sh. A line of such a file is a kind and its fields ('#' starts a comment):
#
#   apt PACKAGE...                 Debian 12 packages the backend builds against (install_deps.sh)
#   pip REQUIREMENT...             pinned PyPI wheels whose native libraries the backend links,
#                                  installed without their dependencies into BUILD_DIR/engines
#   deb PATH SHA256 FROM TO        a file of the Debian archive (PATH under the mirror), checked
#                                  against SHA256; its folder FROM is unpacked to engines/TO
#                                  (engines/TO.from names the archive: not fetched again)
#   link GLOB NAME                 beside the one file GLOB (under engines/) matches, a link
#                                  NAME to it (a wheel that ships only the full version)

COLLAGE_ROOT=${COLLAGE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}

# Exits 1, naming the file and line, where a line has an unknown kind or too few fields.
check_backend_dependencies() {
  local file line number fields
  for file in "$COLLAGE_ROOT"/backends/*/dependencies; do
    [[ -f "$file" ]] || continue
    number=0
    while IFS= read -r line || [[ -n "$line" ]]; do
      number=$((number + 1))
      read -r -a fields <<< "${line%%#*}"
      [[ ${#fields[@]} -eq 0 ]] && continue
      local wanted
      case "${fields[0]}" in
        apt | pip) wanted=2 ;;
        deb) wanted=5 ;;
        link) wanted=3 ;;
        *)
          echo "$file:$number: unknown kind '${fields[0]}' (apt, pip, deb or link)" >&2
          exit 1
          ;;
      esac
      if [[ ${#fields[@]} -lt $wanted || ( "${fields[0]}" =~ ^(deb|link)$ && ${#fields[@]} -ne $wanted ) ]]; then
        echo "$file:$number: '${fields[0]}' takes $((wanted - 1)) field(s): $line" >&2
        exit 1
      fi
    done < "$file"
  done
}

# The fields of every line of kind $1, one line each, backends in folder-name order.
backend_dependencies() {
  local kind=$1 file line fields
  for file in "$COLLAGE_ROOT"/backends/*/dependencies; do
    [[ -f "$file" ]] || continue
    while IFS= read -r line || [[ -n "$line" ]]; do
      read -r -a fields <<< "${line%%#*}"
      if [[ ${#fields[@]} -gt 1 && "${fields[0]}" == "$kind" ]]; then
        echo "${fields[*]:1}"
      fi
    done < "$file"
  done
}
