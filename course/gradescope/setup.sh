#!/usr/bin/env bash
# Gradescope autograder image setup: /autograder/source holds the instructor's repository
# (with course/tests/hidden). Build its environment once; submissions are built per run.
set -euo pipefail
cd /autograder/source
apt-get install -y -q python3.11 python3.11-venv gcc make git
make venv
