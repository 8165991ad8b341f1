#!/bin/bash
# Unpacks the Debian packages bench/gpu/carry-debs.sh downloaded (.carry/debs) into PREFIX, never
# into /, and points their pkg-config and CMake files and their absolute links into PREFIX, so that
# CMake (CMAKE_PREFIX_PATH=PREFIX/usr) and pkg-config (PKG_CONFIG_PATH) find them there.
#
# usage (from the repository's root): bench/gpu/unpack-debs.sh PREFIX
set -euo pipefail
prefix=${1:?usage: bench/gpu/unpack-debs.sh PREFIX}
ls .carry/debs/*.deb >/dev/null || { echo "no .carry/debs: run bench/gpu/carry-debs.sh first" >&2; exit 1; }
rm -rf "$prefix" && mkdir -p "$prefix"
for deb in .carry/debs/*.deb; do dpkg -x "$deb" "$prefix"; done
# Their pkg-config and CMake files name /usr, and some links (libz.so) point at /lib: into the prefix.
grep -rlI '/usr' "$prefix/usr/lib" "$prefix/usr/share/cmake" "$prefix/usr/share/pkgconfig" 2>/dev/null |
  grep -E '\.(pc|cmake)$' | xargs -r sed -i -E "s#(^|[\"'= ;(])/usr(/|$|[\"' ;)])#\1$prefix/usr\2#g"
find "$prefix" -type l -lname '/*' | while read -r link; do
  target=$(readlink "$link")
  if [ -e "$prefix$target" ]; then ln -sfn "$prefix$target" "$link"; fi
done
# Lua's luaconf.h includes "lua5.4-deb-multiarch.h", which Debian keeps in the compiler's multiarch
# folder (/usr/include/x86_64-linux-gnu): beside luaconf.h, a quoted include finds it.
cp "$prefix"/usr/include/*-linux-gnu/lua5.4-deb-multiarch.h "$prefix/usr/include/lua5.4/"
echo "unpacked $(ls .carry/debs/*.deb | wc -l) packages into $prefix"
