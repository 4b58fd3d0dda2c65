#!/bin/sh
# Rebuilds the committed class files the probe engine's property tests read
# (src/classfile/probe/tests.rs), with the JDK 17 javac:
#   release8/   javac -g --release 8  src/*.java
#   release17/  javac -g --release 17 src/*.java src17/*.java
#   lines/      javac -g:lines --release 17 src/*.java (no local variable tables)
set -eu
cd "$(dirname "$0")"
rm -rf release8 release17 lines
javac -g --release 8 -d release8 src/*.java
javac -g --release 17 -d release17 src/*.java src17/*.java
javac -g:lines --release 17 -d lines src/*.java
