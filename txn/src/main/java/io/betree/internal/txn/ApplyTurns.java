package io.betree.internal.txn;

import io.betree.internal.tree.BeTree;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

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

    private static final class Turns {
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition advanced = lock.newCondition();
        /** The last turn handed out; written inside the commit gate only. */
        private long issued;
        /** The last turn finished. Guarded by lock. */
        private long finished;

        long issue() {
            return ++issued;
        }

        void await(long turn) {
            lock.lock();
            try {
                while (finished < turn - 1) {
                    advanced.awaitUninterruptibly();
                }
            } finally {
                lock.unlock();
            }
        }

        void done(long turn) {
            lock.lock();
            try {
                finished = turn;
                advanced.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }
}
