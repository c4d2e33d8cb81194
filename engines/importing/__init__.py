"""`hypergov import`: the tree of a live org, read with the drift scan's readers (`read`) and
decided purely (`decide`): documents with where each value came from, and a report of what the
tree cannot say."""
