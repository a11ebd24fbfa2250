#!/usr/bin/env bash
# Gradescope autograder image setup. /autograder/source holds the instructor's repository (with
# course/tests/hidden and the course file). Everything is built here, once per image: grading a
# submission compiles nothing, since only the Python bodies of its solution blocks are used.
set -euo pipefail
cd /autograder/source
apt-get update -q
apt-get install -y -q python3.11 python3.11-venv python3.11-dev gcc make git
make venv PYTHON=python3.11
