// simpler runtime — byte-range interval trees for the tensor map (internal).
//
// A forest of treaps over one shared node pool indexed by entry number: each tree holds
// the entries of one buffer's reader or writer set, ordered by lo, and
// every node knows the largest `hi` below it, and that of its left subtree. A query then
// only descends into subtrees that can hold a range overlapping [lo, hi), deciding from
// the node it stands on (no look at a child it does not enter), so an access to a buffer
// with many disjoint views visits one root-to-leaf path plus the overlapping nodes
// instead of all of them. Nodes have parent
// links, so erase needs no search and a write that hides an entry with the same byte
// range takes its node's place in O(1). The pool only grows with the number of entries,
// so steady-state inserts and erases never allocate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace simpler::rt {

class IntervalForest {
 public:
  static constexpr uint32_t kNil = UINT32_MAX;

  size_t size() const { return nodes_.size(); }
  // Makes node numbers [0, n) usable; the only call that allocates.
  void reserve_nodes(size_t n) {
    if (nodes_.size() < n) nodes_.resize(n);
  }
  void clear() { nodes_.clear(); }

  // Adds node `n` (not in any tree) with byte range [lo, hi) to the tree at `root`:
  // down to a leaf by `lo`, then rotated up to its random heap position.
  void insert(uint32_t& root, uint32_t n, int64_t lo, int64_t hi) {
    nodes_[n] = Node{lo, hi, hi, kNone, kNil, kNil, kNil, next_priority()};
    if (root == kNil) {
      root = n;
      return;
    }
    uint32_t t = root;
    for (;;) {
      Node& x = nodes_[t];
      if (hi > x.max_hi) x.max_hi = hi;
      if (lo < x.lo && hi > x.left_max_hi) x.left_max_hi = hi;
      uint32_t& child = lo < x.lo ? x.left : x.right;
      if (child == kNil) {
        child = n;
        nodes_[n].parent = t;
        break;
      }
      t = child;
    }
    while (nodes_[n].parent != kNil && nodes_[n].priority > nodes_[nodes_[n].parent].priority)
      rotate_up(root, n);
  }

  // Removes node `n`, which must be in the tree at `root`: rotated down until it has at
  // most one child, spliced out, then the subtree maxima above it are recomputed.
  void erase(uint32_t& root, uint32_t n) {
    for (;;) {
      const Node& x = nodes_[n];
      if (x.left == kNil || x.right == kNil) break;
      rotate_up(root, nodes_[x.left].priority > nodes_[x.right].priority ? x.left : x.right);
    }
    const Node& x = nodes_[n];
    const uint32_t child = x.left != kNil ? x.left : x.right;
    const uint32_t parent = x.parent;
    if (child != kNil) nodes_[child].parent = parent;
    link_from_parent(root, parent, n, child);
    for (uint32_t t = parent; t != kNil; t = nodes_[t].parent) pull(t);
  }

  // Puts node `n` (not in any tree) in the place of node `old` (in the tree at `root`),
  // which leaves the tree; both cover the same byte range [lo, hi). O(1): no rebalancing,
  // as `n` takes over the priority and subtree maximum too.
  void replace(uint32_t& root, uint32_t old, uint32_t n) {
    const Node x = nodes_[old];
    nodes_[n] = x;
    if (x.left != kNil) nodes_[x.left].parent = n;
    if (x.right != kNil) nodes_[x.right].parent = n;
    link_from_parent(root, x.parent, old, n);
  }

  bool same_range(uint32_t n, int64_t lo, int64_t hi) const {
    return nodes_[n].lo == lo && nodes_[n].hi == hi;
  }

  // Calls visit(n) for every node n of the tree at `root` whose range meets [lo, hi),
  // in ascending range start. `visit` must not modify the forest.
  template <typename Visit>
  void query(uint32_t root, int64_t lo, int64_t hi, Visit&& visit) const {
    if (root == kNil || nodes_[root].max_hi <= lo) return;  // nothing ends after lo
    descend(root, lo, hi, visit);
  }

 private:
  static constexpr int64_t kNone = INT64_MIN;  // the max_hi of an empty subtree

  // Ordered by lo (equal starts in any order); max_hi over the subtree, left_max_hi over
  // the left subtree.
  struct Node {
    int64_t lo;
    int64_t hi;
    int64_t max_hi;
    int64_t left_max_hi;
    uint32_t left;
    uint32_t right;
    uint32_t parent;
    uint32_t priority;  // a max-heap on these keeps expected depth logarithmic
  };
  static_assert(sizeof(Node) == 48);

  // Visits the nodes of the subtree at `t` (not empty, with max_hi > lo) that meet
  // [lo, hi). Each right child entered also has max_hi > lo: its range or one below it
  // ends after lo, or the subtree's maximum would not exceed lo.
  template <typename Visit>
  void descend(uint32_t t, int64_t lo, int64_t hi, Visit& visit) const {
    for (;;) {
      const Node& x = nodes_[t];
      if (x.left_max_hi > lo) descend(x.left, lo, hi, visit);
      if (x.lo >= hi) return;  // this node and its right subtree start too late
      if (x.hi > lo) visit(t);
      if (x.right == kNil || nodes_[x.right].max_hi <= lo) return;
      t = x.right;
    }
  }

  // xorshift32: deterministic per forest, no shared state.
  uint32_t next_priority() {
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 17;
    rng_ ^= rng_ << 5;
    return rng_;
  }

  void pull(uint32_t t) {
    Node& x = nodes_[t];
    x.left_max_hi = x.left != kNil ? nodes_[x.left].max_hi : kNone;
    int64_t m = x.hi > x.left_max_hi ? x.hi : x.left_max_hi;
    if (x.right != kNil && nodes_[x.right].max_hi > m) m = nodes_[x.right].max_hi;
    x.max_hi = m;
  }

  // Makes `to` the child of `parent` that `from` was (or the root).
  void link_from_parent(uint32_t& root, uint32_t parent, uint32_t from, uint32_t to) {
    if (parent == kNil)
      root = to;
    else if (nodes_[parent].left == from)
      nodes_[parent].left = to;
    else
      nodes_[parent].right = to;
  }

  // Rotates `n` above its parent, keeping the order and both subtree maxima.
  void rotate_up(uint32_t& root, uint32_t n) {
    Node& x = nodes_[n];
    const uint32_t p = x.parent;
    Node& y = nodes_[p];
    if (y.left == n) {
      y.left = x.right;
      if (x.right != kNil) nodes_[x.right].parent = p;
      x.right = p;
    } else {
      y.right = x.left;
      if (x.left != kNil) nodes_[x.left].parent = p;
      x.left = p;
    }
    x.parent = y.parent;
    link_from_parent(root, y.parent, p, n);
    y.parent = n;
    pull(p);
    pull(n);
  }

  std::vector<Node> nodes_;
  uint32_t rng_ = 0x9E3779B9u;
};

}  // namespace simpler::rt
