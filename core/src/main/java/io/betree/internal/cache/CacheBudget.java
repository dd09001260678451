package io.betree.internal.cache;

import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The cap on node memory that one or more {@link NodeCache}s draw on: an environment's own, or one
 * that several environments of a process share (a stream processor opens a store per partition).
 *
 * <p>The cap is not a target: the members' evictors work once the members together hold more than
 * a little less than it ({@link #targetBytes}), and writers wait past it. Under a shared cap a
 * member evicts only while it holds more than an equal share of the target, so a busy member takes
 * memory from idle ones, which keep at most their share when memory is short; when the members
 * together are over the target at least one of them holds more than its share.
 *
 * <p>Thread-safe. Members' byte counts are read without their locks, so the total may lag a change
 * by a moment.
 */
public final class CacheBudget {
    private final long capBytes;
    private final long targetBytes;
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
        this.targetBytes = capBytes - Math.min(capBytes / 4, Math.max(capBytes / 8, 16L << 20));
    }

    /** The cap: writers wait for the evictors past it. */
    public long capBytes() {
        return capBytes;
    }

    /** The evictors work while the members hold more than this. */
    public long targetBytes() {
        return targetBytes;
    }

    /** Node memory the members hold now (each: the larger of its entries' bytes and its footprint). */
    public long heldBytes() {
        long sum = 0;
        for (NodeCache c : members) {
            sum += c.ownHeldBytes();
        }
        return sum;
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

    /** Whether {@code cache} should evict now: the members are over the target and it holds more than its share. */
    boolean shouldEvict(NodeCache cache, long held) {
        if (held <= targetBytes) {
            return false;
        }
        int n = members.size();
        return n <= 1 || cache.ownHeldBytes() > targetBytes / n;
    }

    /** Asks every member other than {@code asker} that holds more than its share to evict. */
    void askOthersToEvict(NodeCache asker) {
        int n = members.size();
        if (n <= 1) {
            return;
        }
        for (NodeCache c : members) {
            if (c != asker && c.ownHeldBytes() > targetBytes / n) {
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
