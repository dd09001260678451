package io.betree;

/**
 * The invariant check of the public API's test-jar: runs the tree checker over every index of an
 * open environment (pivot order and key bounds, heights, message and row order, the newer-above
 * rule for messages, no block reachable twice) and checks the data file's block bookkeeping
 * against the trees (no block shared by two indexes, none allocated and unreachable). Commits wait
 * while it runs. It ships in this module's test-jar only, beside {@link StorageSeam}; system tests
 * call it, typically after every reopen.
 */
public final class TreeChecks {
    private TreeChecks() {
    }

    /**
     * Checks {@code env}; returns quietly when every invariant holds.
     *
     * @throws CorruptionException naming the block and the broken invariant
     * @throws IllegalStateException if the environment is closed
     */
    public static void verify(Environment env) {
        env.checkInvariants();
    }
}
