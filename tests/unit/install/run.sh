#!/bin/bash
# Installs the libmcp component of build tree $1 into a scratch prefix and
# builds applications against it with pkg-config and with find_package(mcp).
set -euo pipefail
build=$1
src=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
prefix=$scratch/prefix

cmake --install "$build" --prefix "$prefix" --component libmcp >/dev/null
pc_dir=$(dirname "$(find "$prefix" -name libmcp.pc)")
grep -qx "prefix=$prefix" "$pc_dir/libmcp.pc"
test -L "$(dirname "$pc_dir")/libmcp.so.0"

echo "== pkg-config (shared)"
export PKG_CONFIG_PATH=$pc_dir
# shellcheck disable=SC2046
cc -std=c99 -Wall -Wextra -Werror -o "$scratch/pc_c" "$src/consumer.c" $(pkg-config --cflags --libs libmcp)
LD_LIBRARY_PATH=$(dirname "$pc_dir") "$scratch/pc_c"
# shellcheck disable=SC2046
c++ -std=c++20 -Wall -Wextra -Werror -o "$scratch/pc_cpp" "$src/consumer.cpp" $(pkg-config --cflags --libs libmcp)
LD_LIBRARY_PATH=$(dirname "$pc_dir") "$scratch/pc_cpp"
echo "== pkg-config --static"
# shellcheck disable=SC2046
cc -std=c99 -o "$scratch/pc_c_static" "$src/consumer.c" $(pkg-config --cflags libmcp) \
	"$(dirname "$pc_dir")/libmcp.a" $(pkg-config --static --libs-only-l libmcp | sed 's/-lmcp//')
"$scratch/pc_c_static"

echo "== find_package(mcp)"
cmake -S "$src" -B "$scratch/cm" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_COMPILE_WARNING_AS_ERROR=ON >/dev/null
cmake --build "$scratch/cm" -j2 >/dev/null
for exe in consumer_c consumer_cpp consumer_c_static consumer_cpp_static; do
	"$scratch/cm/$exe"
done
echo "install consumers: ok"
