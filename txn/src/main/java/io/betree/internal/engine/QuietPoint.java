package io.betree.internal.engine;

import io.betree.internal.tree.BeTree;
import io.betree.internal.txn.TransactionManager;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A quiet point of the commit order taken with the trees' flush steps paused, as a checkpoint's
 * start and the invariant check need. Flushes are paused first, while commits go on (inside the
 * quiet point a flush step in progress would hold every commit back). A large commit being applied
 * waits for the flushers, though, so the quiet point is tried with patience: when the commits in
 * flight are not applied in time, flushes resume, the commits are waited out, and it tries again.
 */
final class QuietPoint {
    /** How long a try waits for the commits in flight with flushes paused and new commits held. */
    static final long PATIENCE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private QuietPoint() {
    }

    /** Runs {@code action} at a quiet point with the flushes of {@code trees} paused; returns its result. */
    static <T> T run(TransactionManager txns, List<BeTree> trees, Supplier<T> action) {
        boolean interrupted = false;
        try {
            while (true) {
                // An interrupt would end every wait at once and make this loop spin, holding the
                // flushers back from the commits it waits for: it is passed on at the end instead.
                interrupted |= Thread.interrupted();
                txns.awaitApplied();
                interrupted |= Thread.interrupted();
                Object[] result = new Object[1];
                boolean done = BeTree.withFlushesPaused(trees,
                        () -> txns.tryRunExclusive(() -> result[0] = action.get(), PATIENCE_NANOS));
                if (done) {
                    @SuppressWarnings("unchecked")
                    T t = (T) result[0];
                    return t;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
