package io.betree;

import io.betree.internal.tree.BeTree;
import java.util.Objects;

/**
 * A named, ordered map from byte-string keys to byte-string values inside an {@link Environment}.
 * Keys sort as unsigned byte strings (a proper prefix first). Obtained from
 * {@link Environment#openIndex}; valid until the environment closes.
 *
 * <p>Thread-safe: any number of threads may call any method concurrently. Writes to one index are
 * applied one at a time; reads run in parallel with each other. Arguments are copied before a
 * method returns and returned arrays are fresh copies, so callers may reuse their arrays.
 */
public final class Index {
    /** Longest accepted key: 32 KiB. */
    public static final int MAX_KEY_BYTES = 32 << 10;
    /** Longest accepted value: 16 MiB. */
    public static final int MAX_VALUE_BYTES = 16 << 20;

    private final Environment env;
    private final String name;
    private final BeTree tree;

    Index(Environment env, String name, BeTree tree) {
        this.env = env;
        this.name = name;
        this.tree = tree;
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
        Objects.requireNonNull(value, "value");
        if (value.length > MAX_VALUE_BYTES) {
            throw new IllegalArgumentException("value of " + value.length + " bytes exceeds the limit of "
                    + MAX_VALUE_BYTES);
        }
        checkOpen();
        tree.put(key, value);
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
        return tree.get(key);
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
        tree.delete(key);
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
        return new Cursor(this, tree, from, to);
    }

    /** A cursor over the whole index. */
    public Cursor scan() {
        return scan(null, null);
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

    BeTree tree() {
        return tree;
    }

    @Override
    public String toString() {
        return "Index[" + name + "]";
    }
}
