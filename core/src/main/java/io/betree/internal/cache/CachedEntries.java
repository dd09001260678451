package io.betree.internal.cache;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The entries a {@link NodeCache} holds: the map that pinners look blocks up in, the clock ring
 * that the evictor chooses victims from, and the bytes the entries are accounted for, which the
 * cache's budget limits.
 *
 * <p>Not thread-safe, but for lookups: entries join and leave with the owning cache's lock held,
 * and the ring is guarded by it (but for {@link ClockRing#use}); {@link #get}, {@link #contains}
 * and {@link #accountedBytes} take no lock, and {@link #remeasure} is for whoever has the entry
 * pinned or claimed.
 */
final class CachedEntries {
    private final ConcurrentHashMap<Long, CacheEntry> entries = new ConcurrentHashMap<>();
    private final ClockRing ring = new ClockRing();
    private final AtomicLong accountedBytes = new AtomicLong();

    /** The cached entry of {@code blockNumber}, or null. Lock-free. */
    CacheEntry get(long blockNumber) {
        return entries.get(blockNumber);
    }

    /** Whether the entry of {@code blockNumber} is cached now. Lock-free. */
    boolean contains(long blockNumber) {
        return entries.containsKey(blockNumber);
    }

    /** Entries cached now. */
    int size() {
        return entries.size();
    }

    /** The entries in clock order. */
    ClockRing ring() {
        return ring;
    }

    /** The bytes the entries are accounted for now. Lock-free. */
    long accountedBytes() {
        return accountedBytes.get();
    }

    /** Lock held: caches {@code e}, on probation when {@code loaded} from its block ({@link ClockRing}). */
    void insert(CacheEntry e, boolean loaded) {
        if (loaded) {
            ring.addLoaded(e);
        } else {
            ring.add(e);
            e.referenced = true;
        }
        entries.put(e.blockNumber(), e); // after its ring state: pinners that find it read that
        e.accountedBytes = e.memoryBytes();
        accountedBytes.addAndGet(e.accountedBytes);
    }

    /** Lock held: the entry leaves the map and the ring; no pin can be taken on it afterwards. */
    void remove(CacheEntry e) {
        e.markGone();
        entries.remove(e.blockNumber(), e);
        ring.remove(e);
        accountedBytes.addAndGet(-e.accountedBytes);
    }

    /**
     * Brings the count of {@code e}'s bytes up to date with its size now. The caller has {@code e}
     * pinned or claimed, and is the only one changing its size.
     */
    void remeasure(CacheEntry e) {
        long now = e.memoryBytes();
        accountedBytes.addAndGet(now - e.accountedBytes);
        e.accountedBytes = now;
    }

    /** Lock held: forgets every entry, releasing none (the caller has released their memory). */
    void clear() {
        ring.clear();
        entries.clear();
        accountedBytes.set(0);
    }
}
