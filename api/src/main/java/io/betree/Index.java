package io.betree;

import io.betree.internal.engine.StoredIndex;
import io.betree.internal.tree.BeTree;
import io.betree.internal.tree.UpdateList;
import io.betree.internal.txn.WriteOp;
import java.util.List;
import java.util.Objects;

/**
 * A named, ordered map from byte-string keys to byte-string values inside an {@link Environment}.
 * Keys sort as unsigned byte strings (a proper prefix first). Obtained from
 * {@link Environment#openIndex}; valid until the environment closes.
 *
 * <p>Methods without a {@link Transaction} act as a transaction of their own: a write is committed
 * (and durable as the environment's {@link Durability} says) when it returns; a read sees the
 * latest commit. Methods with one act within it.
 *
 * <p>Thread-safe: any number of threads may call any method concurrently. Commits are applied to
 * an index in commit order, outside the environment's commit gate; reads run in parallel with
 * each other and with commits. Arguments are copied before a
 * method returns and returned arrays are fresh copies, so callers may reuse their arrays.
 */
public final class Index {
    /** Longest accepted key: 32 KiB. */
    public static final int MAX_KEY_BYTES = 32 << 10;
    /** Longest accepted value: 16 MiB. */
    public static final int MAX_VALUE_BYTES = 16 << 20;

    private final Environment env;
    private final String name;
    private final int id;
    private final BeTree tree;

    Index(Environment env, StoredIndex stored) {
        this.env = env;
        this.name = stored.name();
        this.id = stored.id();
        this.tree = stored.tree();
    }

    int id() {
        return id;
    }

    /** The index's name. */
    public String name() {
        return name;
    }

    /**
     * Stores {@code value} under {@code key}, replacing any previous value.
     *
     * @throws NullPointerException if key or value is null
     * @throws IllegalArgumentException if the key exceeds {@link #MAX_KEY_BYTES} or the value
     *     {@link #MAX_VALUE_BYTES}
     * @throws IllegalStateException if the environment is closed
     * @throws BetreeException if the write fails in storage
     */
    public void put(byte[] key, byte[] value) {
        checkKey(key);
        checkValue(value);
        checkOpen();
        env.commit(-1, List.of(WriteOp.put(id, tree, key, value)));
    }

    /**
     * Stores {@code value} under {@code key} within {@code txn}; visible to others once it commits.
     *
     * @throws WriteConflictException if another transaction committed this key after {@code txn}
     *     began; {@code txn} is aborted
     * @throws IllegalStateException if {@code txn} is no longer active or the environment is closed
     * @see #put(byte[], byte[])
     */
    public void put(Transaction txn, byte[] key, byte[] value) {
        Objects.requireNonNull(txn, "txn");
        checkKey(key);
        checkValue(value);
        txn.checkOwner(env);
        txn.write(this, key, value);
    }

    /**
     * The value stored under {@code key}, or {@code null} when there is none.
     *
     * @throws NullPointerException if key is null
     * @throws IllegalStateException if the environment is closed
     * @throws CorruptionException if a block on the way is damaged
     */
    public byte[] get(byte[] key) {
        checkKey(key);
        checkOpen();
        return read(key, env.visibleTs());
    }

    private byte[] read(byte[] key, long snapshotTs) {
        try {
            return tree.get(key, snapshotTs);
        } catch (io.betree.internal.fault.BetreeException e) {
            throw Failures.translate(e);
        }
    }

    /**
     * The value under {@code key} as {@code txn} sees it: its own writes, else its snapshot.
     *
     * @throws IllegalStateException if {@code txn} is no longer active or the environment is closed
     */
    public byte[] get(Transaction txn, byte[] key) {
        Objects.requireNonNull(txn, "txn");
        checkKey(key);
        txn.checkOwner(env);
        txn.checkActive();
        Transaction.OwnWrite own = txn.ownWrite(this, key);
        if (own == null) {
            return read(key, txn.snapshotTs());
        }
        if (own.updateList()) {
            return applyUpdates(key, read(key, txn.snapshotTs()), own.value());
        }
        return own.value() == Transaction.DELETED ? null : own.value().clone();
    }


    /**
     * Changes the value under {@code key} by the {@link UpdateFunction} registered as
     * {@code function}, called with {@code argument}, without reading it: the update is a message
     * that meets the value where it is, later. Reads see the new value as soon as this returns.
     * Updates are blind: concurrent updates of a key all commit and apply in commit order, and take
     * part in no write conflict among themselves (a transaction that puts or deletes the key and
     * began before this update committed still conflicts with it).
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if no function is registered under that name, or the key or
     *     argument is too long
     * @throws IllegalStateException if the environment is closed
     * @throws RuntimeException what the function throws when called with a null old value, which
     *     the update does once to check its argument; nothing is written then
     * @throws BetreeException if the write fails in storage
     */
    public void update(byte[] key, String function, byte[] argument) {
        checkKey(key);
        checkOpen();
        byte[] list = checkedCall(key, function, argument, null);
        env.commit(-1, List.of(WriteOp.update(id, tree, key, list)));
    }

    /**
     * As {@link #update(byte[], String, byte[])}, within {@code txn}: reads in {@code txn} see it at
     * once. Blind, so it never fails for a write conflict; an update of a key {@code txn} put or
     * deleted before is applied to that value at once, and what the function throws then reaches
     * the caller, {@code txn} unchanged. Updates of a key {@code txn} did not write
     * otherwise commit as one message holding every call: at most 65,535 of them, and
     * {@link #MAX_VALUE_BYTES} of function names and arguments together.
     *
     * @throws IllegalArgumentException as {@link #update(byte[], String, byte[])}, or past the limits above
     * @throws IllegalStateException if {@code txn} is no longer active or the environment is closed
     */
    public void update(Transaction txn, byte[] key, String function, byte[] argument) {
        Objects.requireNonNull(txn, "txn");
        checkKey(key);
        txn.checkOwner(env);
        txn.checkActive();
        txn.update(this, key, function, argument);
    }

    /**
     * Checks an update's function and argument: the function is registered and accepts the
     * argument for an absent value; returns {@code list} (null: none yet) with the call appended.
     */
    byte[] checkedCall(byte[] key, String function, byte[] argument, byte[] list) {
        Objects.requireNonNull(function, "function");
        Objects.requireNonNull(argument, "argument");
        if (!env.functions().knows(function)) {
            throw new IllegalArgumentException("no update function is registered under the name \"" + function
                    + "\": register it with EnvironmentOptions.updateFunction");
        }
        byte[] longer = UpdateList.append(list, function, argument);
        if (longer.length > MAX_VALUE_BYTES) {
            throw new IllegalArgumentException("an update of " + longer.length + " bytes (function names and"
                    + " arguments) exceeds the limit of " + MAX_VALUE_BYTES);
        }
        env.functions().apply(function, key.clone(), null, argument.clone());
        return longer;
    }

    /**
     * What {@code function} makes of {@code base} (null: absent) with {@code argument}, a copy; null
     * when it deletes. What the function throws reaches the caller.
     */
    byte[] callNow(byte[] key, byte[] base, String function, byte[] argument) {
        return env.functions().apply(function, key.clone(), base, argument.clone());
    }

    /** The value {@code updateList} makes of {@code base} (null: absent) for {@code key}; null when absent. */
    byte[] applyUpdates(byte[] key, byte[] base, byte[] updateList) {
        try {
            return UpdateList.apply(env.functions(), key, base, updateList);
        } catch (io.betree.internal.fault.BetreeException e) {
            throw Failures.translate(e);
        }
    }

    /**
     * Removes {@code key} and its value; does nothing when absent.
     *
     * @throws NullPointerException if key is null
     * @throws IllegalStateException if the environment is closed
     */
    public void delete(byte[] key) {
        checkKey(key);
        checkOpen();
        env.commit(-1, List.of(WriteOp.delete(id, tree, key)));
    }

    /**
     * Removes {@code key} within {@code txn}.
     *
     * @throws WriteConflictException as {@link #put(Transaction, byte[], byte[])}
     * @throws IllegalStateException if {@code txn} is no longer active or the environment is closed
     */
    public void delete(Transaction txn, byte[] key) {
        Objects.requireNonNull(txn, "txn");
        checkKey(key);
        txn.checkOwner(env);
        txn.write(this, key, Transaction.DELETED);
    }

    /**
     * A cursor over the keys {@code k} with {@code fromInclusive <= k < toExclusive}; a null bound
     * leaves that end open. The caller closes the cursor.
     *
     * @throws IllegalStateException if the environment is closed
     */
    public Cursor scan(byte[] fromInclusive, byte[] toExclusive) {
        checkOpen();
        byte[] from = fromInclusive == null ? new byte[0] : fromInclusive.clone();
        byte[] to = toExclusive == null ? null : toExclusive.clone();
        return new Cursor(this, tree, from, to, null);
    }

    /**
     * A cursor over {@code [fromInclusive, toExclusive)} as {@code txn} sees it: its snapshot with
     * its own writes on top. The cursor must not outlive the transaction.
     *
     * @throws IllegalStateException if {@code txn} is no longer active or the environment is closed
     */
    public Cursor scan(Transaction txn, byte[] fromInclusive, byte[] toExclusive) {
        Objects.requireNonNull(txn, "txn");
        txn.checkOwner(env);
        txn.checkActive();
        byte[] from = fromInclusive == null ? new byte[0] : fromInclusive.clone();
        byte[] to = toExclusive == null ? null : toExclusive.clone();
        return new Cursor(this, tree, from, to, txn);
    }

    /** A cursor over the whole index. */
    public Cursor scan() {
        return scan(null, null);
    }

    private static void checkValue(byte[] value) {
        Objects.requireNonNull(value, "value");
        if (value.length > MAX_VALUE_BYTES) {
            throw new IllegalArgumentException("value of " + value.length + " bytes exceeds the limit of "
                    + MAX_VALUE_BYTES);
        }
    }

    private static void checkKey(byte[] key) {
        Objects.requireNonNull(key, "key");
        if (key.length > MAX_KEY_BYTES) {
            throw new IllegalArgumentException("key of " + key.length + " bytes exceeds the limit of " + MAX_KEY_BYTES);
        }
    }

    void checkOpen() {
        env.checkOpen();
    }

    long visibleTs() {
        return env.visibleTs();
    }

    BeTree tree() {
        return tree;
    }

    @Override
    public String toString() {
        return "Index[" + name + "]";
    }
}
