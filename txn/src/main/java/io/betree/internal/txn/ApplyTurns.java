package io.betree.internal.txn;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Keeps each tree's writes in commit order once commits are applied outside the commit gate. A
 * tree must receive its messages in timestamp order (a message in a node's buffer must be newer
 * than anything below it for the same key), so every commit takes, inside the gate, a turn at
 * each tree it writes, and its writes to that tree run only when the turns before it have run.
 * Commits that write different trees apply in parallel, and a commit can apply to one tree while
 * the next applies to another. A commit only ever waits for earlier commits, so no cycle of waits
 * can form.
 *
 * <p>Turns are combined: whichever thread finds the next turn's writes waiting runs them, and the
 * ones after, on behalf of their commits, which it then wakes. When each commit ran its own turn,
 * the next one could start only once its thread had been woken and scheduled; with 16 writers on
 * two cores that wake-up sat between every two commits of a tree. A combining thread runs at most
 * {@value #MAX_COMBINED} turns of others in a row, then hands over to the owner of the next one,
 * so that its own commit is not held up for long.
 *
 * <p>Thread-safe. {@link #take} is called inside the commit gate, which orders the turns.
 *
 * @param <T> what turns are taken at: the engine's trees
 */
final class ApplyTurns<T> {
    /** Turns of other commits one thread runs before it hands over. */
    static final int MAX_COMBINED = 32;

    private final Map<T, Turns> byTree = new ConcurrentHashMap<>();

    /** Takes the next turn at {@code tree}. Called inside the commit gate. */
    long take(T tree) {
        return byTree.computeIfAbsent(tree, t -> new Turns()).issue();
    }

    /**
     * Runs {@code writes} as turn {@code turn} at {@code tree}, once every earlier turn there has
     * run: on this thread, or on a thread running turns when this one comes up. Returns once it
     * has run, throwing what it threw. Every turn taken must be run, even with nothing to write,
     * or the turns after it wait forever. With {@code onOwnThread}, the writes run on the calling
     * thread only (a large commit, which waits for the flushers between batches).
     */
    void run(T tree, long turn, Runnable writes, boolean onOwnThread) {
        byTree.get(tree).run(new Job(turn, writes, Thread.currentThread(), onOwnThread));
    }

    /** One commit's writes to one tree, and what became of them. */
    private static final class Job {
        final long turn;
        final Runnable writes;
        final Thread owner;
        final boolean onOwnThread;
        /** Set after {@link #error}, so that the owner that sees it done sees the error too. */
        volatile boolean done;
        Throwable error;

        Job(long turn, Runnable writes, Thread owner, boolean onOwnThread) {
            this.turn = turn;
            this.writes = writes;
            this.owner = owner;
            this.onOwnThread = onOwnThread;
        }
    }

    /** The turns of one tree. */
    private static final class Turns {
        /** Jobs handed in whose turn has not come, by turn. */
        private final ConcurrentHashMap<Long, Job> waiting = new ConcurrentHashMap<>();
        /** Held by the thread running turns. */
        private final ReentrantLock running = new ReentrantLock();
        /** The last turn handed out; written inside the commit gate only. */
        private long issued;
        /** The last turn run. */
        private volatile long finished;

        long issue() {
            return ++issued;
        }

        void run(Job job) {
            waiting.put(job.turn, job);
            runWaiting(job);
            boolean interrupted = false;
            while (!job.done) {
                LockSupport.park(this);
                interrupted |= Thread.interrupted();
                if (!job.done) {
                    // Woken to take over (or spuriously): run what is due, this job included.
                    runWaiting(job);
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            if (job.error instanceof Error e) {
                throw e;
            }
            if (job.error instanceof RuntimeException e) {
                throw e;
            }
            if (job.error != null) {
                throw new IllegalStateException("applying a commit failed: " + job.error, job.error);
            }
        }

        /**
         * Runs the turns that are due, unless another thread is at it. A thread that finds nothing
         * due after letting go looks once more: a job handed in while it was letting go found the
         * lock taken and left its turn to it. A thread that stops with turns due wakes the owner
         * of the next one once it has let go, so that the owner finds the lock free.
         */
        private void runWaiting(Job mine) {
            int[] others = new int[1];
            do {
                if (!running.tryLock()) {
                    return;
                }
                Job handOver;
                // Another commit's writes must not fail for this thread's interrupt (a read of an
                // evicted node through an interrupted thread's channel fails): the interrupt is
                // set aside while jobs run and passed on afterwards.
                boolean interrupted = Thread.interrupted();
                try {
                    handOver = runDue(mine, others);
                } finally {
                    running.unlock();
                    if (interrupted) {
                        Thread.currentThread().interrupt();
                    }
                }
                if (handOver != null) {
                    LockSupport.unpark(handOver.owner);
                    return;
                }
            } while (waiting.containsKey(finished + 1));
        }

        /**
         * Lock held: runs due turns in order, waking the owners of the others' turns it ran;
         * returns null once none is due, or the next due job if it stopped before it (a turn that
         * must run on its own thread, or {@value #MAX_COMBINED} turns of others run).
         */
        private Job runDue(Job mine, int[] others) {
            for (Job next = waiting.get(finished + 1); next != null; next = waiting.get(finished + 1)) {
                boolean own = next == mine;
                if (!own && (next.onOwnThread || others[0] == MAX_COMBINED)) {
                    return next;
                }
                waiting.remove(next.turn);
                try {
                    next.writes.run();
                } catch (Throwable e) {
                    // Whatever it threw, even a checked exception sneaked through: the turn is over.
                    next.error = e;
                }
                finished = next.turn;
                next.done = true;
                if (!own) {
                    others[0]++;
                    LockSupport.unpark(next.owner);
                }
            }
            return null;
        }
    }
}
