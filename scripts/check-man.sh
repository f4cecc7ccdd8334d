#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Check the man pages:
#  1. docs/clove.3 renders without a single warning: groff with all
#     warnings on (-ww), then man(1) with --warnings as a user would see it.
#     Any output on stderr fails.
#  2. Its NAME section lists exactly the public names of include/clove.h,
#     and each of them also occurs in the page outside NAME. Public names
#     are the functions (declared with CLOVE_API, static inline or
#     CLOVE__INLINE), macros (#define) and types (typedef names, struct,
#     union and enum tags) whose names start with clove_ or CLOVE_ but not
#     clove__ or CLOVE__, other than CLOVE_H and CLOVE_API. man-db's
#     lexgrog (what whatis and apropos use) reads the same names from NAME.
#  3. The installed pages, under PREFIX (--prefix), or under a temporary
#     prefix that BUILD_DIR is installed into (--build):
#     for every name in NAME, man -M finds a page under PREFIX and renders
#     it, with --warnings, exactly as clove.3 and with nothing on stderr;
#     and the link pages there (".so man3/clove.3", cmake/man.cmake) are
#     exactly one NAME.3 per name.
# Without --prefix or --build, step 3 is skipped, with a message. Every
# failure is reported by name and makes the script exit 1. Needs groff,
# man-db (scripts/deps.sh man) and perl.
# Usage: scripts/check-man.sh [--build BUILD_DIR | --prefix PREFIX]
set -euo pipefail
usage() { echo "usage: scripts/check-man.sh [--build BUILD_DIR | --prefix PREFIX]" >&2; exit 2; }
build="" prefix=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) [ $# -ge 2 ] || usage; build=$(realpath "$2"); shift 2 ;;
    --prefix) [ $# -ge 2 ] || usage; prefix=$(realpath "$2"); shift 2 ;;
    *) usage ;;
  esac
done
[ -z "$build" ] || [ -z "$prefix" ] || usage
cd "$(dirname "$0")/.."
page=docs/clove.3
header=include/clove.h
unset MANOPT
fail=0   # this step failed
failed=0 # an earlier step failed
err() { printf 'check-man: %s\n' "$*" >&2; fail=1; }
next_step() { [ "$fail" -eq 0 ] || failed=1; fail=0; }

# 1. The page itself.
for tool in groff man; do
  rc=0
  if [ "$tool" = groff ]; then
    warnings=$(groff -man -ww -z "$page" 2>&1 >/dev/null) || rc=$?
  else
    warnings=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null) || rc=$?
  fi
  if [ -n "$warnings" ]; then
    err "$tool warns about $page:"$'\n'"$warnings"
  elif [ "$rc" -ne 0 ]; then
    err "$tool exits $rc on $page"
  fi
done
[ "$fail" -eq 0 ] && echo "check-man: $page renders without warnings"
next_step

# 2. NAME against the header. Prints the names in NAME other than "clove"
# on stdout, one a line; offenders on stderr, and exits 1 if there are any.
# NAME is read as cmake/man.cmake reads it: the lines after ".SH NAME" up
# to "\-", without request and comment lines, without the escapes \% and
# \&, split at commas.
names_out=$(perl - "$header" "$page" <<'PERL'
use strict;
use warnings;
my ($header, $page) = @ARGV;
local $/;
open my $fh, '<', $header or die "check-man: $header: $!\n";
my $h = <$fh>;
open $fh, '<', $page or die "check-man: $page: $!\n";
my $p = <$fh>;
my $bad = 0;
sub bad { print STDERR "check-man: @_\n"; $bad = 1 }

# Public names of the header, with their kind.
$h =~ s{/\*.*?\*/}{ }gs;
$h =~ s{//[^\n]*}{}g;
$h =~ s{\\\n}{ }g;
my $pub = qr/(?:clove|CLOVE)_(?!_)\w+/;
my %kind;
$kind{$1} //= 'macro' while $h =~ /^[ \t]*#[ \t]*define[ \t]+($pub)/mg;
$kind{$1} //= 'function'
  while $h =~ /\b(?:CLOVE_API|static\s+inline|CLOVE__INLINE)\b[^;{}()#]*?\b($pub)\s*\(/g;
$kind{$1} //= 'type' while $h =~ /\btypedef\b[^;{}]*?\b($pub)\s*[;(]/g;
$kind{$1} //= 'type' while $h =~ /\btypedef\b[^;{}]*?\(\s*\*\s*($pub)\s*\)/g;
$kind{$1} //= 'type' while $h =~ /\b(?:struct|union|enum)\s+($pub)\s*\{/g;
$kind{$1} //= 'type' while $h =~ /\}\s*($pub)\s*;/g;
delete @kind{qw(CLOVE_H CLOVE_API)};

# The NAME section, and the page without it and without comments.
$p =~ /^\.SH NAME[ \t]*\n(.*?)(?=^\.SH|\z)/ms or die "check-man: $page: no .SH NAME\n";
my $section = $1;
(my $rest = $p) =~ s/^\.SH NAME[ \t]*\n.*?(?=^\.SH|\z)//ms;
$section =~ s/^[.'][^\n]*\n?//mg;
$section =~ /^(.*?)\\-/s or die "check-man: $page: the NAME section has no \\-\n";
(my $list = $1) =~ s/\\[%&]//g;
my (@names, %in_name);
for my $n (split /,/, $list, -1) {
  $n =~ s/^\s+|\s+$//g;
  if ($n !~ /^[A-Za-z_]\w*$/) { bad("\"$n\" in the NAME section of $page is not a C identifier"); next }
  if ($in_name{$n}++) { bad("$n is listed twice in the NAME section of $page"); next }
  push @names, $n unless $n eq 'clove';
}
$rest =~ s/^\.\\".*\n?//mg;
$rest =~ s/\\".*//g;
$rest =~ s/\\f(?:\[[^\]]*\]|\(..|.)//g;
$rest =~ s/\\[%&]//g;

for my $n (sort keys %kind) {
  bad("$n ($kind{$n} in $header) is missing from the NAME section of $page")
    unless $in_name{$n};
}
for my $n (@names) {
  if (!$kind{$n}) {
    bad("$n is in the NAME section of $page, but $header declares no function, macro or type $n");
  } elsif ($rest !~ /(?<![\w])\Q$n\E(?![\w])/) {
    bad("$n ($kind{$n}) is in the NAME section of $page, but nowhere else in it");
  }
}
print "$_\n" for @names;
exit $bad;
PERL
) || fail=1
mapfile -t names <<<"$names_out"
[ -n "$names_out" ] || names=()
# whatis and apropos see the names that man-db's own NAME parser, lexgrog,
# reads: the same list.
if [ "${#names[@]}" -gt 0 ]; then
  lexgrog_names=$(lexgrog "$page" | sed -n 's/^[^"]*"\(.*\) - .*"$/\1/p' | sort) || true
  want_names=$(printf '%s\n' clove "${names[@]}" | sort)
  if [ "$lexgrog_names" != "$want_names" ]; then
    err "lexgrog $page (whatis, apropos) reads other names than NAME lists:"$'\n'"$(diff <(echo "$want_names") <(echo "$lexgrog_names") | grep '^[<>]' || true)"
  fi
fi
if [ "$fail" -eq 0 ]; then
  echo "check-man: NAME lists the ${#names[@]} public names of $header (and clove)"
fi
next_step

# 3. The installed pages.
if [ -z "$build" ] && [ -z "$prefix" ]; then
  echo "check-man: installed pages not checked (give --build BUILD_DIR or --prefix PREFIX)"
  exit "$failed"
fi
if [ "${#names[@]}" -eq 0 ]; then
  echo "check-man: no names read from NAME, installed pages not checked" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "$build" ]; then
  prefix=$tmp/prefix
  # cmake --install BUILD_DIR --prefix PREFIX, which needs CMake 3.15.
  if ! log=$(cmake -DCMAKE_INSTALL_PREFIX="$prefix" -P "$build/cmake_install.cmake" 2>&1); then
    printf '%s\n' "$log" >&2
    echo "check-man: installing $build into $prefix failed" >&2
    exit 1
  fi
fi
top=$(find "$prefix" -path '*/man3/clove.3' | head -n 1)
if [ -z "$top" ]; then
  echo "check-man: no man3/clove.3 under $prefix" >&2
  exit 1
fi
mandir=${top%/man3/clove.3}
want=$(MANWIDTH=80 man -M "$mandir" 3 clove 2>/dev/null) || true
declare -A warned=() # what man prints on stderr -> the names it prints it for
warnings_seen=()
errfile=$tmp/stderr
for n in "${names[@]}"; do
  if ! where=$(man -M "$mandir" -w 3 "$n" 2>&1); then
    err "man -M $mandir -w 3 $n finds no page: $where"
    continue
  fi
  case "$where" in
    "$mandir"/*) ;;
    *) err "man -M $mandir -w 3 $n finds $where, not a page under $mandir"; continue ;;
  esac
  if ! got=$(MANWIDTH=80 man --warnings -M "$mandir" 3 "$n" 2>"$errfile"); then
    err "man -M $mandir 3 $n fails:"$'\n'"$(cat "$errfile")"
    continue
  fi
  if [ -s "$errfile" ]; then
    w=$(cat "$errfile")
    [ -n "${warned[$w]+set}" ] || warnings_seen+=("$w")
    warned[$w]="${warned[$w]:-}${warned[$w]:+ }$n"
  fi
  [ "$got" = "$want" ] || err "man -M $mandir 3 $n does not show clove.3"
done
for w in "${warnings_seen[@]}"; do
  err "man --warnings -M $mandir 3 NAME warns, for NAME in ${warned[$w]}:"$'\n'"$w"
done
# Link pages: files under the man directory that hold the one line
# ".so man3/clove.3", named after their name.
declare -A listed=()
for n in "${names[@]}"; do listed[$n]=1; done
declare -A linked=()
links=0
while IFS= read -r f; do
  [ -n "$f" ] || continue
  [ "$(cat "$f")" = ".so man3/clove.3" ] || continue
  links=$((links + 1))
  n=$(basename "$f")
  n=${n%.*}
  linked[$n]=1
  if [ "$f" != "$mandir/man3/$n.3" ]; then
    err "link page $f is not $mandir/man3/$n.3"
  elif [ -z "${listed[$n]:-}" ]; then
    err "link page $f is for $n, which is not in the NAME section of $page"
  fi
done < <(grep -rlx '\.so man3/clove\.3' "$mandir" || true)
for n in "${names[@]}"; do
  [ -n "${linked[$n]:-}" ] || err "no link page man3/$n.3 under $mandir"
done
if [ "$links" -ne "${#names[@]}" ]; then
  err "$links link pages under $mandir for ${#names[@]} names (rebuild the build folder after editing NAME: cmake --build BUILD_DIR)"
fi
if [ "$fail" -eq 0 ]; then
  echo "check-man: man -M ${mandir#"$prefix"/} shows clove.3 without warnings for each of the ${#names[@]} names, one link page each"
fi
next_step
exit "$failed"
