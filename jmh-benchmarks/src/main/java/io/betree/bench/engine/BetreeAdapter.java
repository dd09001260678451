package io.betree.bench.engine;

import io.betree.Codec;
import io.betree.Cursor;
import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.IndexOptions;
import io.betree.Transaction;
import io.betree.UpdateFunction;
import io.betree.WriteConflictException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * betree through its public API: one {@link Environment} whose off-heap node cache is the whole
 * budget, one {@link Index} per table with the chosen codec and default shape (4 MiB nodes, 64 KiB
 * basements, fanout 16; {@code -Dbench.betreeBasementSize=BYTES} sets another basement size). A batch is one {@link Transaction} per thread; its commit is logged and,
 * with {@code sync}, synced ({@link Durability#SYNC}); without it the log is written but synced only
 * at checkpoints ({@link Durability#NONE}), as RocksDB's unsynced WAL. Threads writing disjoint keys
 * never conflict (snapshot isolation conflicts only on the same key).
 *
 * <p>Every environment registers the update benchmark's three functions ({@link #ADD},
 * {@link #SET_FIELD}, {@link #ADD_COLUMN}); workloads that do not update never call them. Its
 * {@link #updates()} are betree's {@code Index.update} for the blind messages, a transaction
 * retried on {@link WriteConflictException} for read-modify-write, and {@code Index.updateAll} and
 * {@code Index.deleteRange} (top level, each one message committed on its own) for the messages
 * that cover many keys.
 */
public final class BetreeAdapter implements EngineAdapter {
    /** Engine name. */
    public static final String NAME = "betree";
    /** Name of {@link #ADD}. */
    public static final String ADD_NAME = "add";
    /** Name of {@link #SET_FIELD}. */
    public static final String SET_FIELD_NAME = "set-field";
    /** Name of {@link #ADD_COLUMN}. */
    public static final String ADD_COLUMN_NAME = "add-column";

    /**
     * Adds its argument to the value, both 8-byte big-endian longs; an absent value counts as 0.
     * Throws for a value or argument of another length, which then changes nothing.
     */
    public static final UpdateFunction ADD = (key, old, argument) -> {
        if (argument.length != Updates.COUNTER_BYTES
                || old != null && old.length != Updates.COUNTER_BYTES) {
            throw new IllegalArgumentException("add takes 8-byte counters, not " + argument.length + " and "
                    + (old == null ? 0 : old.length) + " bytes");
        }
        long before = old == null ? 0 : ByteBuffer.wrap(old).getLong();
        return ByteBuffer.allocate(Updates.COUNTER_BYTES).putLong(before + ByteBuffer.wrap(argument).getLong())
                .array();
    };

    /**
     * Overwrites part of the value: the argument is a 4-byte big-endian offset, then the bytes to
     * write there. An absent value stays absent (null: there is no row to change), as an SQL
     * {@code UPDATE} of a missing row; a value too short for the field throws, which changes
     * nothing.
     */
    public static final UpdateFunction SET_FIELD = (key, old, argument) -> {
        if (argument.length < 4) {
            throw new IllegalArgumentException("set-field takes an offset and bytes, not " + argument.length
                    + " bytes");
        }
        if (old == null) {
            return null;
        }
        int offset = ByteBuffer.wrap(argument).getInt();
        int length = argument.length - 4;
        if (offset < 0 || offset > old.length - length) {
            throw new IllegalArgumentException("a field of " + length + " bytes at " + offset + " is outside a value of "
                    + old.length + " bytes");
        }
        byte[] out = old.clone();
        System.arraycopy(argument, 4, out, offset, length);
        return out;
    };

    /**
     * Appends its argument to the value (a column added to every row by a broadcast); an absent
     * value stays absent.
     */
    public static final UpdateFunction ADD_COLUMN = (key, old, argument) -> {
        if (old == null) {
            return null;
        }
        byte[] out = Arrays.copyOf(old, old.length + argument.length);
        System.arraycopy(argument, 0, out, old.length, argument.length);
        return out;
    };

    private Environment env;
    private EngineSettings settings;
    private Path dir;
    private final Map<String, Table> tables = new HashMap<>();
    private final ThreadLocal<Transaction> txn = new ThreadLocal<>();
    private final Updates updates = new BetreeUpdates();

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public boolean supports(Codec codec) {
        return true;
    }

    @Override
    public void open(Path dir, EngineSettings settings) {
        if (env != null) {
            throw new IllegalStateException("already open");
        }
        this.dir = dir;
        this.settings = settings;
        this.env = Environment.open(dir, EnvironmentOptions.defaults().cacheBytes(settings.budgetBytes())
                .durability(settings.sync() ? Durability.SYNC : Durability.NONE).updateFunction(ADD_NAME, ADD)
                .updateFunction(SET_FIELD_NAME, SET_FIELD).updateFunction(ADD_COLUMN_NAME, ADD_COLUMN));
    }

    @Override
    public Table table(String name) {
        return tables.computeIfAbsent(name,
                n -> new BetreeTable(env.openIndex(n, shape().codec(settings.codec())), this));
    }

    /**
     * The default index options, or, for shape experiments, the basement size of the system property
     * {@code bench.betreeBasementSize} (bytes).
     */
    private static IndexOptions shape() {
        String basement = System.getProperty("bench.betreeBasementSize");
        return basement == null ? IndexOptions.defaults() : IndexOptions.defaults().basementSize(Integer.parseInt(basement));
    }

    @Override
    public void commit() {
        Transaction t = txn.get();
        // Cleared first: a failed commit ends the transaction, and close() must not retry it
        // (its exception would hide the original one).
        txn.remove();
        if (t != null) {
            t.commit();
        }
    }

    private Transaction txn() {
        Transaction t = txn.get();
        if (t == null) {
            t = env.begin();
            txn.set(t);
        }
        return t;
    }

    @Override
    public void flush() {
        commit();
        env.checkpoint();
    }

    @Override
    public long diskBytes() {
        return DirectorySize.of(dir, null);
    }

    @Override
    public long writerWaitNanos() {
        return env == null ? -1 : env.writerWaitNanos();
    }

    @Override
    public Updates updates() {
        return updates;
    }

    @Override
    public void close() {
        if (env != null) {
            commit();
            tables.clear();
            env.close();
            env = null;
        }
    }

    /** Blind updates by {@link #ADD} and {@link #SET_FIELD}; read-modify-write in a transaction. */
    private final class BetreeUpdates implements Updates {
        @Override
        public String blindAddName() {
            return "update";
        }

        @Override
        public byte[] encodeCounter(long n) {
            return ByteBuffer.allocate(COUNTER_BYTES).putLong(n).array();
        }

        @Override
        public long decodeCounter(byte[] value) {
            return value == null ? 0 : ByteBuffer.wrap(value).getLong();
        }

        @Override
        public void addToCounter(Table table, byte[] key, long delta) {
            ((BetreeTable) table).index.update(txn(), key, ADD_NAME, encodeCounter(delta));
        }

        @Override
        public boolean hasBlindFieldWrite() {
            return true;
        }

        @Override
        public void setField(Table table, byte[] key, int offset, byte[] field) {
            byte[] argument = ByteBuffer.allocate(4 + field.length).putInt(offset).put(field).array();
            ((BetreeTable) table).index.update(txn(), key, SET_FIELD_NAME, argument);
        }

        @Override
        public boolean isolatedReadModifyWrite() {
            return true;
        }

        @Override
        public int inBatch(Runnable body) {
            int retries = 0;
            while (true) {
                try {
                    body.run();
                    commit();
                    return retries;
                } catch (WriteConflictException e) {
                    // The transaction is aborted already (at the write or the commit); the next
                    // attempt begins a new one, with a later snapshot.
                    Transaction t = txn.get();
                    txn.remove();
                    if (t != null) {
                        t.abort();
                    }
                    retries++;
                }
            }
        }

        @Override
        public byte[] readInBatch(Table table, byte[] key) {
            return ((BetreeTable) table).index.get(txn(), key);
        }

        @Override
        public boolean hasBroadcast() {
            return true;
        }

        @Override
        public void appendToAll(Table table, byte[] suffix) {
            commit();
            ((BetreeTable) table).index.updateAll(ADD_COLUMN_NAME, suffix);
        }

        @Override
        public void deleteRange(Table table, byte[] fromInclusive, byte[] toExclusive) {
            Objects.requireNonNull(toExclusive, "toExclusive");
            commit();
            ((BetreeTable) table).index.deleteRange(fromInclusive, toExclusive);
        }
    }

    private static final class BetreeTable implements Table {
        private final Index index;
        private final BetreeAdapter adapter;

        BetreeTable(Index index, BetreeAdapter adapter) {
            this.index = index;
            this.adapter = adapter;
        }

        @Override
        public void put(byte[] key, byte[] value) {
            index.put(adapter.txn(), key, value);
        }

        @Override
        public byte[] get(byte[] key) {
            return index.get(key);
        }

        @Override
        public void delete(byte[] key) {
            index.delete(adapter.txn(), key);
        }

        @Override
        public long scan(byte[] from, byte[] to, long limit, ScanSink sink) {
            long n = 0;
            try (Cursor c = index.scan(from, to)) {
                while (n < limit && c.next()) {
                    sink.accept(c.key(), c.value());
                    n++;
                }
            }
            return n;
        }
    }
}
