package io.betree.internal.txn;

import io.betree.internal.tree.BeTree;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * Keeps each tree's writes in commit order once commits are applied outside the commit gate. A
 * tree must receive its messages in timestamp order (a message in a node's buffer must be newer
 * than anything below it for the same key), so every commit takes, inside the gate, a turn at
 * each tree it writes, and applies its writes to that tree only when the turns before it are done.
 * Commits that write different trees apply in parallel, and a commit can apply to one tree while
 * the next applies to another. A commit only ever waits for earlier commits, so no cycle of waits
 * can form.
 *
 * <p>Thread-safe. {@link #take} is called inside the commit gate, which orders the turns.
 */
final class ApplyTurns {
    private final Map<BeTree, Turns> byTree = new ConcurrentHashMap<>();

    /** Takes the next turn at {@code tree}. Called inside the commit gate. */
    long take(BeTree tree) {
        return byTree.computeIfAbsent(tree, t -> new Turns()).issue();
    }

    /** Waits until every turn at {@code tree} before {@code turn} is done. */
    void await(BeTree tree, long turn) {
        byTree.get(tree).await(turn);
    }

    /** Ends {@code turn} at {@code tree}, whether the writes succeeded or not, so later turns go on. */
    void done(BeTree tree, long turn) {
        byTree.get(tree).done(turn);
    }

    /**
     * The turns of one tree. A finished turn wakes only the commit whose turn is next, not every
     * waiting commit: with 16 writers on one tree, waking all of them at every turn cost each commit
     * fifteen needless wake-ups.
     */
    private static final class Turns {
        /** The commits waiting for their turn, by turn. */
        private final ConcurrentHashMap<Long, Thread> waiting = new ConcurrentHashMap<>();
        /** The last turn handed out; written inside the commit gate only. */
        private long issued;
        /** The last turn finished. */
        private volatile long finished;

        long issue() {
            return ++issued;
        }

        void await(long turn) {
            if (finished >= turn - 1) {
                return;
            }
            // Registered before finished is read again: a done() that misses this entry has
            // already advanced finished, so the loop below does not park.
            waiting.put(turn, Thread.currentThread());
            try {
                while (finished < turn - 1) {
                    LockSupport.park(this);
                }
            } finally {
                waiting.remove(turn);
            }
        }

        void done(long turn) {
            finished = turn;
            Thread next = waiting.get(turn + 1);
            if (next != null) {
                LockSupport.unpark(next);
            }
        }
    }
}
