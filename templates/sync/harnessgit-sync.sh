#!/usr/bin/env bash
# Share harnessgit's records with a remote, from any machine that writes them.
#
#   harnessgit-sync.sh [REMOTE]        (default: origin)
#
# 1. fetch the remote's notes beside ours (refs/notes/remotes/REMOTE/harnessgit/*),
#    its candidates, archived candidates, pins and evidence stores;
# 2. merge each notes ref into ours with `git notes merge -s cat_sort_uniq`: a note
#    is a set of one-line records whose order carries no meaning (docs/design.md),
#    so the union of the lines loses nothing and never conflicts;
# 3. push notes, candidates, archive and pins, and this machine's evidence store
#    under refs/harnessgit/evidence-stores/MACHINE: every machine rewrites its own
#    evidence-store commit, so one shared name would be a non-fast-forward push,
#    and the blobs it keeps alive must stay reachable on the remote.
#
# Labels (refs/harnessgit/labels/*) are not synced: a label is a decision; push it
# on purpose (git push REMOTE refs/harnessgit/labels/production).
set -euo pipefail
remote=${1:-origin}
machine=${HARNESSGIT_MACHINE:-$(hostname | tr -c 'A-Za-z0-9-\n' '-')}
theirs="refs/notes/remotes/$remote/harnessgit"

git fetch --no-tags "$remote" \
  "+refs/notes/harnessgit/*:$theirs/*" \
  "refs/heads/harnessgit/*:refs/heads/harnessgit/*" \
  "refs/harnessgit/archive/*:refs/harnessgit/archive/*" \
  "refs/harnessgit/pins/*:refs/harnessgit/pins/*" \
  "+refs/harnessgit/evidence-stores/*:refs/harnessgit/evidence-stores/*"

for ref in $(git for-each-ref --format='%(refname)' "$theirs/"); do
  git notes --ref="refs/notes/harnessgit/${ref#"$theirs"/}" merge --quiet -s cat_sort_uniq "$ref"
done

push=(
  "refs/notes/harnessgit/*:refs/notes/harnessgit/*"
  "refs/heads/harnessgit/*:refs/heads/harnessgit/*"
  "refs/harnessgit/archive/*:refs/harnessgit/archive/*"
  "refs/harnessgit/pins/*:refs/harnessgit/pins/*"
)
if git rev-parse --quiet --verify refs/harnessgit/evidence-store > /dev/null; then
  push+=("+refs/harnessgit/evidence-store:refs/harnessgit/evidence-stores/$machine")
fi
git push --quiet "$remote" "${push[@]}"
