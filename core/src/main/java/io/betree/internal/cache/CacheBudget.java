package io.betree.internal.cache;

import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The cap on node memory that one or more {@link NodeCache}s draw on: an environment's own, or one
 * that several environments of a process share (a stream processor opens a store per partition).
 *
 * <p>The cap is not a target: the members' evictors work once the members together hold more than
 * a little less than it ({@link #targetBytes}), and writers wait past it. The room below the cap
 * is for writes; once no member has changed an entry for {@link #QUIET_NANOS} the target comes
 * closer to the cap, so that reads get nearly all of it. Under a shared cap a
 * member evicts only while it holds more than an equal share of the target, so a busy member takes
 * memory from idle ones, which keep at most their share when memory is short; when the members
 * together are over the target at least one of them holds more than its share.
 *
 * <p>Thread-safe. Members' byte counts are read without their locks, so the total may lag a change
 * by a moment.
 */
public final class CacheBudget {
    /** How long after the last change to an entry the budget counts as quiet. */
    static final long QUIET_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final long capBytes;
    private final long writingTargetBytes;
    private final long quietTargetBytes;
    /** When a member last changed an entry ({@link System#nanoTime}), to the millisecond. */
    private volatile long lastChangeNanos = System.nanoTime() - QUIET_NANOS;
    private final CopyOnWriteArrayList<NodeCache> members = new CopyOnWriteArrayList<>();

    /** A cap of {@code capBytes} with no member yet. */
    public CacheBudget(long capBytes) {
        if (capBytes <= 0) {
            throw new IllegalArgumentException("a memory budget must be positive: " + capBytes);
        }
        this.capBytes = capBytes;
        // The room below the cap is for write-backs in flight and writers' bursts while the
        // evictor catches up: an eighth, at least 16 MiB, at most a quarter. With the cap as the
        // evictor's target and a quarter above it as the writers' limit, a 128 MiB cache held up to
        // 160 MiB and more, and a 30 M-row iiBench went past its 512 MiB process cap.
        this.writingTargetBytes = capBytes - Math.min(capBytes / 4, Math.max(capBytes / 8, 16L << 20));
        // Reads need room only for the nodes they bring in, which a clean eviction frees at once.
        // With the writers' room kept, 64 MiB held 48 MiB of nodes, less the pool's partly used
        // chunks: a 28 M-row primary index's leaves (42 MiB, mostly filters) did not stay, and
        // cold random gets read a leaf again for every third get.
        this.quietTargetBytes = capBytes - capBytes / 16;
    }

    /** The cap: writers wait for the evictors past it. */
    public long capBytes() {
        return capBytes;
    }

    /**
     * The evictors work while the members hold more than this: an eighth of the cap below it (at
     * least 16 MiB, at most a quarter) while entries change, a sixteenth once they have not for
     * {@link #QUIET_NANOS}.
     */
    public long targetBytes() {
        return quiet() ? quietTargetBytes : writingTargetBytes;
    }

    /** Whether no member has added or changed an entry for {@link #QUIET_NANOS}. */
    boolean quiet() {
        return System.nanoTime() - lastChangeNanos >= QUIET_NANOS;
    }

    /** A member added or changed an entry. Cheap: a clock read, and a write at most once a millisecond. */
    void changed() {
        long now = System.nanoTime();
        if (now - lastChangeNanos > 1_000_000L) {
            lastChangeNanos = now;
        }
    }

    /**
     * Node memory the members hold now (each: the larger of its entries' bytes and its footprint):
     * what the cap limits.
     */
    public long heldBytes() {
        long sum = 0;
        for (NodeCache c : members) {
            sum += c.ownHeldBytes();
        }
        return sum;
    }

    /**
     * What the evictors bring down to the target. While entries change, {@link #heldBytes}: the
     * room below the cap is then kept for writes. While the budget is quiet, the members' entries
     * or their footprint less the room between target and cap, whichever is more; so they evict
     * while the entries are over the target or the footprint is over the cap. Free pages in the
     * pool's partly used chunks are then not evicted for: new buffers fill them, where evicting
     * frees memory only once a whole chunk is empty. Counting them against the target, random
     * gets (56 KiB basements, 100 KiB leaves) kept 44 MiB of entries in a 60 MiB target, with 17
     * MiB of free pages in the chunks. Under writes it stays as it was: writers are slowed as the
     * footprint nears the cap, and with only the entries counted against the target they were
     * held back 1 s instead of 77 s in a 30 M-row iiBench, whose p99 batch went from 45 to 93 ms.
     */
    public long chargedBytes() {
        long entries = 0;
        long held = 0;
        for (NodeCache c : members) {
            entries += c.entryBytes();
            held += c.ownHeldBytes();
        }
        return quiet() ? Math.max(entries, held - (capBytes - quietTargetBytes)) : held;
    }

    /** Number of caches drawing on this budget. */
    public int members() {
        return members.size();
    }

    void join(NodeCache cache) {
        members.add(cache);
    }

    void leave(NodeCache cache) {
        members.remove(cache);
        // What it held is free now; others may be waiting for room that its going made.
        for (NodeCache c : members) {
            c.signalRoom();
        }
    }

    /**
     * Whether {@code cache} should evict now: the members are over the target
     * ({@link #chargedBytes}) and it holds more than its share.
     */
    boolean shouldEvict(NodeCache cache) {
        long target = targetBytes();
        if (chargedBytes() <= target) {
            return false;
        }
        int n = members.size();
        return n <= 1 || cache.ownHeldBytes() > target / n;
    }

    /** Asks every member other than {@code asker} that holds more than its share to evict. */
    void askOthersToEvict(NodeCache asker) {
        int n = members.size();
        if (n <= 1) {
            return;
        }
        for (NodeCache c : members) {
            if (c != asker && c.ownHeldBytes() > targetBytes() / n) {
                c.requestEvictionFromOutside();
            }
        }
    }

    /** Whether a member other than {@code asker} is evicting now, so that waiting for room may pay off. */
    boolean othersEvicting(NodeCache asker) {
        for (NodeCache c : members) {
            if (c != asker && c.evicting()) {
                return true;
            }
        }
        return false;
    }
}
