# Sourced by .ci/run (and usable by hand: `. scripts/use-node.sh`): puts the project's Node 24
# first on PATH before anything installs, so that `npm ci` itself runs on the supported runtime
# (no EBADENGINE) and every later command does too. The binary is the npm registry's own
# node-<os>-<arch> package at the version package.json pins for its `node` dev dependency;
# it is unpacked once into .tools/ (ignored by git).
_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
_want=$(sed -n 's/^ *"node": "\([0-9][0-9.]*\)".*/\1/p' "$_root/package.json" | head -n 1)
_major=${_want%%.*}
if [ -z "$_want" ]; then
  echo "use-node: package.json pins no node version" >&2
elif [ "$(node -p 'process.versions.node' 2>/dev/null)" != "$_want" ]; then
  case "$(uname -m)" in x86_64) _arch=x64 ;; aarch64|arm64) _arch=arm64 ;; *) _arch=$(uname -m) ;; esac
  _os=$(uname -s | tr '[:upper:]' '[:lower:]')
  _dir="$_root/.tools/node-v$_want-$_os-$_arch"
  if [ ! -x "$_dir/bin/node" ]; then
    rm -rf "$_dir.tmp" && mkdir -p "$_dir.tmp"
    (cd "$_dir.tmp" && npm pack --silent "node-$_os-$_arch@$_want" >/dev/null && tar xzf ./*.tgz --strip-components=1 && rm -f ./*.tgz)
    mv "$_dir.tmp" "$_dir"
  fi
  export PATH="$_dir/bin:$PATH"
fi
echo "use-node: $(command -v node) $(node --version) (want v$_want, Node $_major LTS)"
unset _root _want _major _arch _os _dir
