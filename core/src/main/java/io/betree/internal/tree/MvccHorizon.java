package io.betree.internal.tree;

/**
 * Tells a tree which row versions some reader may still need. The transaction layer implements it;
 * the tree asks when it rewrites a basement and drops every version that no snapshot at or after
 * the horizon can see. Implementations are thread-safe and cheap: the tree asks on its write path.
 */
@FunctionalInterface
public interface MvccHorizon {
    /** The oldest snapshot timestamp any reader may still use. */
    long oldestSnapshot();
}
