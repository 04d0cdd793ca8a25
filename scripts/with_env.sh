#!/usr/bin/env bash
# Run one command inside the project environment:  scripts/with_env.sh cosim doctor
set -e
# shellcheck disable=SC1091
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
exec "$@"
