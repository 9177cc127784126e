#!/usr/bin/env bash
# The install as a program outside the project meets it: `cmake --install`
# into a scratch prefix, then install_consumer.c built with the installed
# pkg-config file alone (so with the installed headers: webtensor.h needs
# the parts it includes from include/webtensor/) and run.
#   install_consumer.sh <cmake> <build dir> <scratch prefix> <libdir> <cc> <install_consumer.c>
set -euo pipefail
cmake=$1 build=$2 prefix=$3 libdir=$4 cc=$5 src=$6
rm -rf "$prefix"
"$cmake" --install "$build" --prefix "$prefix" > /dev/null
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
unset PKG_CONFIG_LIBDIR C_INCLUDE_PATH CPATH
cflags=$(pkg-config --cflags webtensor)
case "$cflags" in
    *"-I$prefix/"*) ;;
    *) echo "FAIL: the installed webtensor.pc names no include folder under $prefix: $cflags"; exit 1 ;;
esac
# The -I of the .pc file is searched before the system's folders.
"$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror $cflags "$src" \
    -o "$prefix/install_consumer" $(pkg-config --libs webtensor)
LD_LIBRARY_PATH="$prefix/$libdir" "$prefix/install_consumer"
