#!/usr/bin/env bash
# Share harnessgit's records with a remote, from any machine that writes them.
#
#   harnessgit-sync.sh [REMOTE]        (default: origin)
#
# Kept for the CI jobs and scripts that call it: it now runs `harnessgit sync`, which
# carries every harnessgit ref (notes, candidates, archive, labels, pins, the evidence
# store) with leased, atomic pushes and a rule for each kind of ref (docs/ci.md). The
# shell version this replaces left labels behind and pushed live branches without a
# lease, so a push racing a retirement brought the retired candidate back.
set -euo pipefail
exec "${HARNESSGIT:-harnessgit}" sync "${1:-origin}"
