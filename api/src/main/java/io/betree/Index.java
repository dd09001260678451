package io.betree;

import io.betree.internal.engine.StoredIndex;
import io.betree.internal.tree.BeTree;
import io.betree.internal.tree.Expiry;
import io.betree.internal.tree.Keys;
import io.betree.internal.tree.UpdateList;
import io.betree.internal.txn.WriteOp;
import java.time.Duration;
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
    /** The engine's record of the index, which notes the update functions its messages name. */
    private final StoredIndex stored;
    /** The TTL of puts without one of their own, in milliseconds; 0 for none ({@link IndexOptions#ttl}). */
    private volatile long defaultTtlMillis;

    Index(Environment env, StoredIndex stored) {
        this.env = env;
        this.stored = stored;
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
        env.commit(-1, List.of(putOp(key, value, defaultTtlMillis)));
    }

    /**
     * Stores {@code value} under {@code key} until {@code ttl} from now on the environment's clock
     * ({@link EnvironmentOptions#clock}): from then on no read sees it (whatever its snapshot), and
     * its space goes when its leaf is next rewritten. An update or broadcast of the value keeps its
     * expiry; one that meets it only after it expired (a flush or a read applies an update where it
     * meets the value, which may be after the update committed) finds the key absent, so put such a
     * key again rather than update it near its expiry.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code ttl} is not positive, or as {@link #put(byte[], byte[])}
     * @throws IllegalStateException if the environment is closed
     */
    public void put(byte[] key, byte[] value, Duration ttl) {
        checkKey(key);
        checkValue(value);
        long millis = ttlMillis(ttl);
        checkOpen();
        env.commit(-1, List.of(putOp(key, value, millis)));
    }

    /**
     * As {@link #put(byte[], byte[], Duration)}, within {@code txn}: the expiry counts from this call.
     *
     * @throws WriteConflictException as {@link #put(Transaction, byte[], byte[])}
     * @throws IllegalArgumentException if {@code ttl} is not positive, or as {@link #put(byte[], byte[])}
     * @throws IllegalStateException if {@code txn} is no longer active or the environment is closed
     */
    public void put(Transaction txn, byte[] key, byte[] value, Duration ttl) {
        Objects.requireNonNull(txn, "txn");
        checkKey(key);
        checkValue(value);
        long millis = ttlMillis(ttl);
        txn.checkOwner(env);
        txn.writeExpiring(this, key, value, expiryAfter(millis));
    }

    /** A put of {@code value} under {@code key} that expires {@code ttlMillis} from now (0: never). */
    private WriteOp putOp(byte[] key, byte[] value, long ttlMillis) {
        return ttlMillis == 0 ? WriteOp.put(id, tree, key, value)
                : WriteOp.putExpiring(id, tree, key, Expiry.wrap(expiryAfter(ttlMillis), value));
    }

    /** Sets the TTL of puts without one of their own ({@link IndexOptions#ttl}): zero for none. */
    void defaultTtl(Duration ttl) {
        defaultTtlMillis = ttl.isZero() ? 0 : ttlMillis(ttl);
    }

    private static long ttlMillis(Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("ttl must be positive, was " + ttl);
        }
        try {
            return Math.max(1, ttl.toMillis());
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    /** The instant {@code ttlMillis} from now, saturated short of {@link Long#MAX_VALUE} (never). */
    private long expiryAfter(long ttlMillis) {
        long now = env.functions().nowMillis();
        return ttlMillis >= Long.MAX_VALUE - 1 - now ? Long.MAX_VALUE - 1 : now + ttlMillis;
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
        long ttl = defaultTtlMillis;
        if (ttl == 0) {
            txn.write(this, key, value);
        } else {
            txn.writeExpiring(this, key, value, expiryAfter(ttl));
        }
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
        if (own != null && !own.updateList()) {
            byte[] value = own.read(env.functions().nowMillis());
            return value == null ? null : value.clone();
        }
        byte[] base = txn.overOwnRanges(this, key, read(key, txn.snapshotTs()));
        return own == null ? base : applyUpdates(key, base, own.value());
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
     * Changes every row of the index by the {@link UpdateFunction} registered as {@code function},
     * called with {@code argument}, in one message: the call takes the same time whatever the row
     * count, and the function meets each row later, where the message reaches it (a flush, a read,
     * a scan). A broadcast applies to every row committed before it, including rows whose writes
     * are still in buffers, and to none written after it; keys absent stay absent (the function is
     * never called for them, except once here with a null old value, to check the argument). A
     * call that throws on a row leaves that row unchanged and is counted in
     * {@link Environment#failedUpdateCalls()}. Blind: it takes part in no write conflict itself,
     * but a transaction that began before it committed and puts or deletes a key then conflicts
     * with it.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if no function is registered under that name, or the
     *     argument is too long
     * @throws IllegalStateException if the environment is closed
     * @throws RuntimeException what the function throws when called with a null old value; nothing
     *     is written then
     */
    public void updateAll(String function, byte[] argument) {
        checkOpen();
        byte[] list = checkedCall(new byte[0], function, argument, null);
        env.commit(-1, List.of(WriteOp.broadcast(id, tree, list)));
    }

    /**
     * As {@link #updateAll(String, byte[])}, within {@code txn}: reads in {@code txn} see it at once,
     * applied to its snapshot. At commit it is blind, so it changes every row committed before the
     * commit, including rows other transactions committed after {@code txn}'s snapshot, and it
     * applies before {@code txn}'s own writes: rows {@code txn} put earlier take the call now (what
     * the function throws then reaches the caller, {@code txn} unchanged), and keys {@code txn}
     * updated earlier without writing them otherwise become puts of what they come to, which then
     * conflict as puts do (and keep no TTL the key's value had). Not available once
     * {@code txn}'s writes passed {@link EnvironmentOptions#transactionMemoryBytes}, and such a
     * transaction must stay within it (it is aborted when it passes it).
     *
     * @throws IllegalArgumentException as {@link #updateAll(String, byte[])}
     * @throws IllegalStateException if {@code txn} is no longer active, its writes moved to a
     *     temporary file, or the environment is closed
     */
    public void updateAll(Transaction txn, String function, byte[] argument) {
        Objects.requireNonNull(txn, "txn");
        txn.checkOwner(env);
        txn.checkActive();
        byte[] list = checkedCall(new byte[0], function, argument, null);
        txn.updateAll(this, function, argument, list);
    }

    /**
     * Removes every key {@code k} with {@code fromInclusive <= k < toExclusive} (a null bound
     * leaves that end open) in one message: the call takes the same time whatever the row count.
     * Rows committed before it are gone for every read whose snapshot includes it, wherever their
     * writes wait (an older snapshot still sees them); rows written after it are not touched. Their space comes back as the message reaches the
     * leaves. Blind, as {@link #updateAll(String, byte[])}. Equal bounds remove nothing.
     *
     * @throws IllegalArgumentException if {@code fromInclusive} sorts after {@code toExclusive}
     *     (unsigned byte order), or a bound is longer than a key may be
     * @throws IllegalStateException if the environment is closed
     */
    public void deleteRange(byte[] fromInclusive, byte[] toExclusive) {
        checkOpen();
        if (checkRange(fromInclusive, toExclusive)) {
            env.commit(-1, List.of(WriteOp.rangeDelete(id, tree, lowerBound(fromInclusive),
                    toExclusive == null ? null : toExclusive.clone())));
        }
    }

    /**
     * As {@link #deleteRange(byte[], byte[])}, within {@code txn}: reads in {@code txn} see it at
     * once, applied to its snapshot. At commit it is blind, so it removes every row in the range
     * committed before the commit, including rows other transactions committed after
     * {@code txn}'s snapshot, and it applies before {@code txn}'s own writes: keys in the range that
     * {@code txn} wrote earlier become deletes; keys it writes later are written. The same limit on {@code txn}'s size as
     * {@link #updateAll(Transaction, String, byte[])}.
     *
     * @throws IllegalArgumentException as {@link #deleteRange(byte[], byte[])}
     * @throws IllegalStateException if {@code txn} is no longer active, its writes moved to a
     *     temporary file, or the environment is closed
     */
    public void deleteRange(Transaction txn, byte[] fromInclusive, byte[] toExclusive) {
        Objects.requireNonNull(txn, "txn");
        txn.checkOwner(env);
        txn.checkActive();
        if (checkRange(fromInclusive, toExclusive)) {
            txn.deleteRange(this, lowerBound(fromInclusive), toExclusive == null ? null : toExclusive.clone());
        }
    }

    /** Checks a range's bounds; whether it holds any key. */
    private static boolean checkRange(byte[] fromInclusive, byte[] toExclusive) {
        for (byte[] bound : new byte[][] {fromInclusive, toExclusive}) {
            if (bound != null && bound.length > MAX_KEY_BYTES) {
                throw new IllegalArgumentException("a range bound of " + bound.length + " bytes exceeds the key limit of "
                        + MAX_KEY_BYTES);
            }
        }
        if (toExclusive == null) {
            return true;
        }
        int c = Keys.compare(fromInclusive == null ? new byte[0] : fromInclusive, toExclusive);
        if (c > 0) {
            throw new IllegalArgumentException("the range's lower bound sorts after its upper bound");
        }
        return c < 0;
    }

    private static byte[] lowerBound(byte[] fromInclusive) {
        return fromInclusive == null ? new byte[0] : fromInclusive.clone();
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
        stored.noteFunction(function); // before the message can commit: see StoredIndex
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
