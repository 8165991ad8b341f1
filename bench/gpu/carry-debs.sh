#!/bin/bash
# Here, before the GPU training check (bench/gpu/train_check.sh): Debian's packages that laconic
# builds and trains with and that a GPU node's image lacks (Lua, SQLite, Gloo, hiredis, CLI11,
# nlohmann-json, cpp-httplib, zlib, and the data: Fashion-MNIST and perl-doc's prose), downloaded
# into .carry/debs (ignored by git; about 43 MB), to travel with the tree. The node unpacks them
# into a prefix of its own (dpkg -x), never into /.
#
# usage: bench/gpu/carry-debs.sh      (needs apt-get download: a Debian 12 machine with its lists)
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .carry/debs
cd .carry/debs
rm -f ./*.deb
apt-get download \
  liblua5.4-dev liblua5.4-0 libsqlite3-dev libsqlite3-0 libgloo-dev libgloo0 libhiredis-dev libhiredis0.14 \
  libibverbs-dev libibverbs1 libnl-3-200 libnl-route-3-200 libcli11-dev nlohmann-json3-dev \
  libcpp-httplib-dev libcpp-httplib0.11 libbrotli1 zlib1g-dev zlib1g dataset-fashion-mnist perl-doc
du -sh .
# The UI's chart library from this build's `npm ci` (the node has no npm): LACONIC_UPLOT_DIST there.
cd ../..
uplot=build/ui/npm/node_modules/uplot/dist
[ -s $uplot/uPlot.iife.min.js ] || { echo "no $uplot: build laconic here first" >&2; exit 1; }
rm -rf .carry/uplot && mkdir -p .carry/uplot && cp $uplot/uPlot.iife.min.js $uplot/uPlot.min.css .carry/uplot/
