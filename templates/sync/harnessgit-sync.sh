#!/usr/bin/env bash
# Share harnessgit's records with a remote, from any machine that writes them.
#
#   harnessgit-sync.sh [REMOTE]        (default: origin)
#
# 1. fetch the remote's notes beside ours (refs/notes/remotes/REMOTE/harnessgit/*),
#    its live candidates beside ours (refs/remotes/REMOTE/harnessgit/cand/*), its
#    archived candidates, pins and evidence stores;
# 2. merge each notes ref into ours with `git notes merge -s cat_sort_uniq`: a note
#    is a set of one-line records whose order carries no meaning (docs/design.md),
#    so the union of the lines loses nothing and never conflicts;
# 3. retire everywhere what was retired anywhere: nothing moves a candidate back out of
#    refs/harnessgit/archive/, so a live branch whose candidate is archived at the same
#    commit is stale, here or on the remote (the archive ref keeps the commit, the
#    retire record says why). The remote's other live candidates become ours;
# 4. push notes, candidates, archive and pins, and this machine's evidence store
#    under refs/harnessgit/evidence-stores/MACHINE: every machine rewrites its own
#    evidence-store commit, so one shared name would be a non-fast-forward push,
#    and the blobs it keeps alive must stay reachable on the remote. Then, with the
#    archive on the remote, delete the remote's stale live branches, each only if it
#    still holds the archived commit (a lease), so no commit is ever left unnamed.
#
# Labels (refs/harnessgit/labels/*) are not synced: a label is a decision; push it
# on purpose (git push REMOTE refs/harnessgit/labels/production).
set -euo pipefail
remote=${1:-origin}
machine=${HARNESSGIT_MACHINE:-$(hostname | tr -c 'A-Za-z0-9-\n' '-')}
theirs="refs/notes/remotes/$remote/harnessgit"
live="refs/heads/harnessgit/cand"
tracking="refs/remotes/$remote/harnessgit/cand"
archive="refs/harnessgit/archive"

# The remote's live candidates as they are now: names left by an earlier fetch would
# look live there after another machine retired them.
git for-each-ref --format='delete %(refname)' "$tracking/" | git update-ref --stdin
git fetch --no-tags "$remote" \
  "+refs/notes/harnessgit/*:$theirs/*" \
  "+$live/*:$tracking/*" \
  "$archive/*:$archive/*" \
  "refs/harnessgit/pins/*:refs/harnessgit/pins/*" \
  "+refs/harnessgit/evidence-stores/*:refs/harnessgit/evidence-stores/*"

for ref in $(git for-each-ref --format='%(refname)' "$theirs/"); do
  git notes --ref="refs/notes/harnessgit/${ref#"$theirs"/}" merge --quiet -s cat_sort_uniq "$ref"
done

archived() { git rev-parse -q --verify "$archive/$1" || true; }
mismatch() {
  echo "harnessgit-sync: candidate $1 is live $2 at ${3:0:12} but archived at ${4:0:12}: not deleted" >&2
}
# A branch checked out in some worktree is left alone: deleting it would leave HEAD
# on a branch that does not exist.
checked_out=" $(git worktree list --porcelain | sed -n 's/^branch //p' | tr '\n' ' ') "
updates=() leases=() stale=() gone=() kept=" "
while read -r ref sha; do
  id=${ref#"$tracking"/}
  retired=$(archived "$id")
  if [ "$retired" = "$sha" ]; then
    leases+=("--force-with-lease=$live/$id:$sha")
    stale+=(":$live/$id")
    gone+=("delete $ref")
  elif [ -n "$retired" ]; then
    mismatch "$id" "on $remote" "$sha" "$retired"
  elif ! git rev-parse -q --verify "$live/$id" > /dev/null; then
    updates+=("create $live/$id $sha")
  fi
done < <(git for-each-ref --format='%(refname) %(objectname)' "$tracking/")
while read -r ref sha; do
  id=${ref#"$live"/}
  retired=$(archived "$id")
  if [ -z "$retired" ]; then
    continue
  elif [ "$retired" != "$sha" ]; then
    mismatch "$id" here "$sha" "$retired"
  elif [[ $checked_out == *" $ref "* ]]; then
    echo "harnessgit-sync: candidate $id is archived but checked out: its branch is kept here" >&2
    kept+="$ref "
  else
    updates+=("delete $ref $sha")
  fi
done < <(git for-each-ref --format='%(refname) %(objectname)' "$live/")
if [ ${#updates[@]} -gt 0 ]; then
  printf '%s\n' "${updates[@]}" | git update-ref --stdin
fi

push=(
  "refs/notes/harnessgit/*:refs/notes/harnessgit/*"
  "$archive/*:$archive/*"
  "refs/harnessgit/pins/*:refs/harnessgit/pins/*"
)
for ref in $(git for-each-ref --format='%(refname)' "$live/"); do
  [[ $kept == *" $ref "* ]] || push+=("$ref:$ref") # a kept retired branch stays here
done
if git rev-parse --quiet --verify refs/harnessgit/evidence-store > /dev/null; then
  push+=("+refs/harnessgit/evidence-store:refs/harnessgit/evidence-stores/$machine")
fi
git push --quiet "$remote" "${push[@]}"
if [ ${#stale[@]} -gt 0 ]; then
  git push --quiet "${leases[@]}" "$remote" "${stale[@]}"
  printf '%s\n' "${gone[@]}" | git update-ref --stdin # the remote no longer has them
fi
