package io.betree;

import io.betree.internal.log.CommitRecord;
import io.betree.internal.log.CommitRecord.Op;
import io.betree.internal.tree.Expiry;
import io.betree.internal.tree.ScanOverlay;
import io.betree.internal.txn.WriteOp;
import io.betree.internal.txn.spill.SpilledWrites;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;

/**
 * An atomic unit of reads and writes across any indexes of one {@link Environment}:
 *
 * <pre>{@code
 * try (Transaction txn = env.begin()) {
 *     orders.put(txn, pk, row);
 *     byPrice.put(txn, priceKey, pk);
 *     txn.commit();
 * }   // closing without commit() aborts
 * }</pre>
 *
 * <p>Isolation: snapshot isolation. Reads see the database as of {@link Environment#begin()} plus
 * the transaction's own writes; readers never block writers or each other. Two transactions that
 * write the same key conflict: the later one fails with {@link WriteConflictException} (first
 * committer wins), at the write if the other has already committed, otherwise at
 * {@link #commit()}; nobody waits for a lock. Writes are kept in the transaction until commit: on
 * the heap up to {@link EnvironmentOptions#transactionMemoryBytes}, then in a temporary file in the
 * environment's directory, so a transaction of millions of writes needs no more heap than a small
 * one.
 *
 * <p>Not thread-safe: use a transaction from one thread at a time. {@link #close()} is idempotent.
 */
public final class Transaction implements AutoCloseable {
    /** Marks a delete in a write set (compared by identity). */
    static final byte[] DELETED = new byte[0];

    /**
     * Rough heap cost of one pending write besides its key's and value's bytes: their two array
     * headers, and the write set's slots with room to grow (three array slots, two to four table
     * slots, each up to twice over while its array waits to be doubled).
     */
    private static final int WRITE_OVERHEAD_BYTES = 72;

    private final Environment env;
    private final long snapshotTs;
    /** When the transaction began ({@link System#nanoTime}): back-pressure counts from there. */
    private final long startedNanos = System.nanoTime();
    private final Map<Index, WriteSet> writes = new LinkedHashMap<>();
    /** About the heap the pending writes in {@link #writes} take. */
    private long heapBytes;
    /** Writes moved off the heap, older than those in {@link #writes}; null until the first move. */
    private SpilledWrites spilled;
    private boolean active = true;
    /**
     * The values in {@link #writes} that are not values but {@link io.betree.internal.tree.UpdateList}s:
     * updates of keys whose value the transaction does not know (it neither put nor deleted them).
     * Compared by identity.
     */
    private final Set<byte[]> updateLists = Collections.newSetFromMap(new IdentityHashMap<>());
    /**
     * The values in {@link #writes} that expire: each is the {@link Expiry} stored form of a put
     * with a TTL. Compared by identity.
     */
    private final Set<byte[]> expiringValues = Collections.newSetFromMap(new IdentityHashMap<>());
    /** Range deletes and broadcasts, which apply before {@link #writes}. */
    private final OwnRanges ranges = new OwnRanges();
    /**
     * Set by the first range operation before it folds itself into the earlier writes (which may
     * pass the heap share): from then on the writes stay on the heap ({@link #spill}).
     */
    private boolean keepsWritesOnHeap;
    /** Whether the snapshot was ended (at commit, or by {@link #finish}). */
    private boolean snapshotEnded;

    Transaction(Environment env, long snapshotTs) {
        this.env = env;
        this.snapshotTs = snapshotTs;
    }

    /** Whether the transaction can still read, write and commit. */
    public boolean isActive() {
        return active;
    }

    /**
     * Makes the transaction's writes visible and, as the environment's {@link Durability} says,
     * durable. After it returns the transaction is finished.
     *
     * @throws WriteConflictException if another transaction committed one of the same keys after
     *     this one began; the transaction is aborted
     * @throws IllegalStateException if the transaction is no longer active
     * @throws BetreeIOException if the log cannot be written (the commit did not happen) or synced
     *     (its outcome is unknown: after reopening it is either wholly present or wholly absent);
     *     either way the environment refuses further work until it is reopened
     */
    public void commit() {
        checkActive();
        if (spilled != null) {
            commitSpilled();
            return;
        }
        int count = 0;
        for (WriteSet set : writes.values()) {
            count += set.size();
        }
        List<WriteOp> ops = new ArrayList<>(count);
        for (Index index : ranges.indexes()) {
            ops.addAll(ranges.ops(index));
        }
        for (Map.Entry<Index, WriteSet> e : writes.entrySet()) {
            Index index = e.getKey();
            e.getValue().forEach((key, value) -> ops.add(value == DELETED ? WriteOp.delete(index.id(), index.tree(), key)
                    : updateLists.contains(value) ? WriteOp.update(index.id(), index.tree(), key, value)
                    : expiringValues.contains(value) ? WriteOp.putExpiring(index.id(), index.tree(), key, value)
                    : WriteOp.put(index.id(), index.tree(), key, value)));
        }
        try {
            // The snapshot ends as soon as the commit is visible, not after the commit has waited
            // for the flushers: it holds back the horizon meanwhile.
            env.commit(snapshotTs, ops, startedNanos, this::endSnapshot);
        } finally {
            finish();
        }
    }

    private void commitSpilled() {
        try {
            try {
                spill();
            } catch (io.betree.internal.fault.BetreeException e) {
                throw Failures.translate(e);
            }
            SpilledWrites all = spilled;
            spilled = null; // The commit closes it, whatever happens.
            env.commitSpilled(snapshotTs, all);
        } finally {
            finish();
        }
    }

    /** Moves the writes on the heap to the spill file, as its newest run. */
    private void spill() {
        if (keepsWritesOnHeap) {
            throw new IllegalStateException("a transaction with deleteRange or updateAll keeps its writes on the heap,"
                    + " and this one's passed EnvironmentOptions.transactionMemoryBytes; it is aborted");
        }
        if (spilled == null) {
            spilled = env.newSpill();
        }
        spilled.spill(OwnWrites.sortedOps(writes, updateLists::contains, expiringValues::contains));
        writes.clear();
        updateLists.clear();
        expiringValues.clear();
        heapBytes = 0;
    }

    /** Discards the transaction's writes. Does nothing if it already finished. */
    public void abort() {
        if (active) {
            finish();
        }
    }

    /** Aborts the transaction unless it was committed. Idempotent. */
    @Override
    public void close() {
        abort();
    }

    private void finish() {
        active = false;
        writes.clear();
        updateLists.clear();
        expiringValues.clear();
        ranges.clear();
        keepsWritesOnHeap = false;
        SpilledWrites s = spilled;
        spilled = null;
        try {
            if (s != null) {
                s.close();
            }
        } finally {
            endSnapshot();
        }
    }

    /** Ends the snapshot, once: at commit, or when the transaction finishes otherwise. */
    private void endSnapshot() {
        if (!snapshotEnded) {
            snapshotEnded = true;
            env.endSnapshot(snapshotTs);
        }
    }

    void checkActive() {
        if (!active) {
            throw new IllegalStateException("transaction is no longer active (committed, aborted or closed)");
        }
        env.checkOpen();
    }

    void checkOwner(Environment owner) {
        if (owner != env) {
            throw new IllegalArgumentException("transaction belongs to another environment");
        }
    }

    long snapshotTs() {
        return snapshotTs;
    }

    /** Records a write (value {@link #DELETED} for a delete); fails at once on a known conflict. */
    void write(Index index, byte[] key, byte[] value) {
        checkWritable(index, key);
        store(index, key, value == DELETED ? DELETED : value.clone(), Kind.VALUE);
    }

    /** Records a put of {@code value} that expires at {@code expiresAtMillis}; fails at once on a known conflict. */
    void writeExpiring(Index index, byte[] key, byte[] value, long expiresAtMillis) {
        checkWritable(index, key);
        store(index, key, Expiry.wrap(expiresAtMillis, value), Kind.EXPIRING);
    }

    private void checkWritable(Index index, byte[] key) {
        checkActive();
        if (env.conflicts(index, key, snapshotTs)) {
            abort();
            throw new WriteConflictException("write conflict on " + index.name()
                    + ": another transaction committed this key after this transaction began");
        }
    }

    /**
     * Records an update of {@code key} by {@code function} with {@code argument}. Blind: no conflict
     * check. Folded into the key's value when the transaction put or deleted it; otherwise added to
     * the key's list of updates, which commits as one update message.
     */
    void update(Index index, byte[] key, String function, byte[] argument) {
        OwnWrite own = ownWrite(index, key);
        if (own != null && !own.updateList()) {
            index.checkedCall(key, function, argument, null);
            // Not yet committed, and the caller is here: what the function throws reaches it.
            byte[] base = own.read(env.functions().nowMillis());
            storeKnown(index, key, index.callNow(key, base, function, argument), own.expiryIf(base));
        } else {
            store(index, key, index.checkedCall(key, function, argument, own == null ? null : own.value()), Kind.UPDATES);
        }
    }

    /**
     * Records a delete of every key in {@code [lower, upper)} ({@code upper} null: no end): the
     * transaction's own earlier writes of keys in it become deletes; at commit the range delete,
     * blind, takes every row committed before it there, including rows committed after this
     * transaction's snapshot.
     */
    void deleteRange(Index index, byte[] lower, byte[] upper) {
        beginRangeOperation("deleteRange");
        keepsWritesOnHeap = true; // before the deletes below, which may pass the heap share
        WriteSet set = writes.get(index);
        if (set != null) {
            NavigableMap<byte[], byte[]> inRange = upper == null ? set.sorted().tailMap(lower, true)
                    : set.sorted().subMap(lower, true, upper, false);
            for (byte[] key : new ArrayList<>(inRange.keySet())) {
                store(index, key, DELETED, Kind.VALUE);
            }
        }
        ranges.addDelete(index, lower, upper);
    }

    /**
     * Records a broadcast of {@code function} with {@code argument} ({@code updateList}, the call
     * checked) to every key of {@code index}: the transaction's own earlier writes of the index
     * take the call now, and its own updates of keys it did not write otherwise become puts of what
     * they come to (read from its snapshot: they then conflict as puts do), since the broadcast,
     * which applies first at commit, must not apply after them.
     */
    void updateAll(Index index, String function, byte[] argument, byte[] updateList) {
        beginRangeOperation("updateAll");
        WriteSet set = writes.get(index);
        List<byte[]> keys = new ArrayList<>();
        List<byte[]> values = new ArrayList<>();
        List<Long> expiries = new ArrayList<>();
        if (set != null) {
            long now = env.functions().nowMillis();
            for (byte[] key : set.sorted().keySet()) {
                OwnWrite own = ownWrite(index, key);
                byte[] before = own.updateList() ? index.get(this, key) : own.read(now);
                keys.add(key);
                values.add(before == null ? null : index.callNow(key, before, function, argument));
                expiries.add(own.updateList() ? NEVER : own.expiryIf(before));
            }
        }
        // Set once the calls above succeeded (a call that throws leaves the transaction as it
        // was), before the stores below, which may pass the heap share.
        keepsWritesOnHeap = true;
        for (int i = 0; i < keys.size(); i++) {
            storeKnown(index, keys.get(i), values.get(i), expiries.get(i));
        }
        ranges.addBroadcast(index, updateList);
    }

    /** Refuses a range operation once the writes spilled (the caller then keeps them on the heap). */
    private void beginRangeOperation(String what) {
        if (spilled != null) {
            throw new IllegalStateException(what + " is not available in a transaction whose writes passed"
                    + " EnvironmentOptions.transactionMemoryBytes and moved to a temporary file");
        }
    }

    /**
     * What {@code committed}, the value of {@code key} in the snapshot (null: absent), comes to
     * after the transaction's own range deletes and broadcasts on {@code index}; null when absent.
     */
    byte[] overOwnRanges(Index index, byte[] key, byte[] committed) {
        return ranges.any(index) ? ranges.over(index, key, committed, env.functions()) : committed;
    }

    /** What a value in {@link #writes} is. */
    private enum Kind {
        /** A value, or {@link #DELETED}. */
        VALUE,
        /** An {@link io.betree.internal.tree.UpdateList} for a key whose value the transaction does not know. */
        UPDATES,
        /** The {@link Expiry} stored form of a value that expires. */
        EXPIRING
    }

    /** No expiry. */
    private static final long NEVER = Long.MAX_VALUE;

    /** Stores {@code value} (null: deleted), expiring at {@code expiry} unless {@link #NEVER}. */
    private void storeKnown(Index index, byte[] key, byte[] value, long expiry) {
        if (value == null) {
            store(index, key, DELETED, Kind.VALUE);
        } else if (expiry == NEVER) {
            store(index, key, value, Kind.VALUE);
        } else {
            store(index, key, Expiry.wrap(expiry, value), Kind.EXPIRING);
        }
    }

    /**
     * Puts {@code value} (the transaction's own array, or {@link #DELETED}) under {@code key} in the
     * write set, as a {@code kind}, and spills the write set once it passes its heap share.
     */
    private void store(Index index, byte[] key, byte[] value, Kind kind) {
        WriteSet set = writes.computeIfAbsent(index, i -> new WriteSet());
        byte[] replaced = set.get(key);
        if (replaced != null) {
            updateLists.remove(replaced);
            expiringValues.remove(replaced);
        }
        set.put(key.clone(), value);
        if (kind == Kind.UPDATES) {
            updateLists.add(value);
        } else if (kind == Kind.EXPIRING) {
            expiringValues.add(value);
        }
        // A key written again costs only its value's growth: a key updated many times replaces its
        // list each time, and counting every list whole would spill after a few hundred updates.
        heapBytes += replaced == null ? WRITE_OVERHEAD_BYTES + key.length + value.length
                : Math.max(0, value.length - replaced.length);
        if (heapBytes > env.transactionMemoryBytes()) {
            try {
                spill();
            } catch (io.betree.internal.fault.BetreeException e) {
                abort();
                throw Failures.translate(e);
            } catch (RuntimeException | Error e) {
                abort();
                throw e;
            }
        }
    }

    /**
     * The transaction's own latest write of a key: {@code value} is the value, {@link #DELETED} for a
     * delete, or, when {@code updateList}, the {@link io.betree.internal.tree.UpdateList} of its
     * updates of a key it did not write otherwise, which wait for the key's committed value; when
     * {@code expiring}, the {@link Expiry} stored form of a value that expires.
     */
    record OwnWrite(byte[] value, boolean updateList, boolean expiring) {
        /** The value as a read at {@code nowMillis} sees it (null: deleted or expired); not for update lists. */
        byte[] read(long nowMillis) {
            return value == DELETED ? null : expiring ? Expiry.live(value, nowMillis) : value;
        }

        /** The expiry a change of this value keeps: its own while {@code base}, what it read as, is present. */
        long expiryIf(byte[] base) {
            return expiring && base != null ? Expiry.of(value) : NEVER;
        }
    }

    /** The transaction's own latest write of {@code key} to {@code index} (on the heap, else spilled), or null. */
    OwnWrite ownWrite(Index index, byte[] key) {
        WriteSet own = writes.get(index);
        byte[] latest = own == null ? null : own.get(key);
        if (latest != null) {
            return new OwnWrite(latest, updateLists.contains(latest), expiringValues.contains(latest));
        }
        if (spilled == null) {
            return null;
        }
        Op op;
        try {
            op = spilled.lookup(index.id(), key);
        } catch (io.betree.internal.fault.BetreeException e) {
            throw Failures.translate(e);
        }
        if (op == null) {
            return null;
        }
        return new OwnWrite(op.value() == null ? DELETED : op.value(), op.type() == CommitRecord.UPDATE,
                op.type() == CommitRecord.PUT_EXPIRING);
    }

    /**
     * The transaction's own writes to {@code index} as a scan lays them over its snapshot (deletes
     * as {@link #DELETED}), or null if there are none.
     */
    ScanOverlay writesTo(Index index) {
        WriteSet own = writes.get(index);
        SpilledWrites moved = spilled;
        boolean ownRanges = ranges.any(index);
        if (own == null && moved == null && !ownRanges) {
            return null;
        }
        // The update lists among the spilled writes a scan has read so far, by identity.
        Set<byte[]> movedUpdateLists = Collections.newSetFromMap(new IdentityHashMap<>());
        return new ScanOverlay() {
            @Override
            public Iterator<Map.Entry<byte[], byte[]>> range(byte[] from, byte[] limit) {
                long now = env.functions().nowMillis();
                Iterator<Map.Entry<byte[], byte[]>> sorted = own == null ? Collections.emptyIterator()
                        : (limit == null ? own.sorted().tailMap(from, true) : own.sorted().subMap(from, true, limit, false))
                                .entrySet().iterator();
                Iterator<Map.Entry<byte[], byte[]>> newer = expiringValues.isEmpty() ? sorted : new Iterator<>() {
                    @Override
                    public boolean hasNext() {
                        return sorted.hasNext();
                    }

                    @Override
                    public Map.Entry<byte[], byte[]> next() {
                        Map.Entry<byte[], byte[]> w = sorted.next();
                        return expiringValues.contains(w.getValue()) ? Map.entry(w.getKey(), OwnWrites.live(w.getValue(), now)) : w;
                    }
                };
                if (moved == null) {
                    return newer;
                }
                Iterator<Op> older;
                try {
                    older = moved.range(index.id(), from, limit);
                } catch (io.betree.internal.fault.BetreeException e) {
                    throw Failures.translate(e);
                }
                return new OwnWrites(older, newer, movedUpdateLists, now);
            }

            @Override
            public boolean isUpdateList(byte[] value) {
                return updateLists.contains(value) || movedUpdateLists.contains(value);
            }

            @Override
            public boolean hasRanges() {
                return ownRanges;
            }

            @Override
            public byte[] overRanges(byte[] key, byte[] committed) {
                return overOwnRanges(index, key, committed);
            }
        };
    }
}
