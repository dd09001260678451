package io.betree.bench.engine;

import io.betree.Codec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.lmdbjava.ByteArrayProxy;
import org.lmdbjava.Dbi;
import org.lmdbjava.DbiFlags;
import org.lmdbjava.Env;
import org.lmdbjava.EnvFlags;
import org.lmdbjava.GetOp;
import org.lmdbjava.Txn;

/**
 * LMDB (lmdbjava), a copy-on-write B+tree in one memory-mapped file: the B-tree a JVM user would
 * pick. One named sub-database per table, keys compared with memcmp (unsigned, as in betree). A
 * batch is one write transaction per thread; LMDB has one writer at a time, so a thread's first
 * write of a batch waits until no other thread has one open. LMDB has no cache of its own and no
 * compression: it reads through the OS page cache, which only the memory cap of a full run
 * ({@code membound}) bounds, and it takes {@link Codec#NONE} whatever codec the others use.
 * Without {@code sync} it commits with {@code MDB_NOSYNC} and data is durable at {@link #flush()};
 * with {@code sync} every commit fsyncs. {@code MDB_NORDAHEAD} keeps random reads from pulling in
 * neighbouring pages.
 */
public final class LmdbAdapter implements EngineAdapter {
    /** Engine name. */
    public static final String NAME = "lmdb";
    /** Address space reserved for the map; the file only grows as pages are used. */
    private static final long MAP_SIZE = 256L << 30;

    private Path dir;
    private Env<byte[]> env;
    private final ThreadLocal<Txn<byte[]>> writeTxn = new ThreadLocal<>();
    private Txn<byte[]> readTxn;
    private boolean readStale;
    private final Map<String, Table> tables = new HashMap<>();

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public boolean supports(Codec codec) {
        return codec == Codec.NONE;
    }

    @Override
    public void open(Path dir, EngineSettings settings) {
        if (env != null) {
            throw new IllegalStateException("already open");
        }
        this.dir = dir;
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<EnvFlags> flags = new ArrayList<>(List.of(EnvFlags.MDB_NOTLS, EnvFlags.MDB_NORDAHEAD));
        if (!settings.sync()) {
            flags.add(EnvFlags.MDB_NOSYNC);
        }
        env = Env.create(ByteArrayProxy.PROXY_BA).setMapSize(MAP_SIZE).setMaxDbs(32).setMaxReaders(16)
                .open(dir.toFile(), flags.toArray(new EnvFlags[0]));
    }

    @Override
    public Table table(String name) {
        Table t = tables.get(name);
        if (t == null) {
            commit();
            endRead();
            t = new LmdbTable(env.openDbi(name, DbiFlags.MDB_CREATE));
            tables.put(name, t);
        }
        return t;
    }

    private Txn<byte[]> writer() {
        Txn<byte[]> t = writeTxn.get();
        if (t == null) {
            endRead();
            t = env.txnWrite();
            writeTxn.set(t);
        }
        return t;
    }

    private Txn<byte[]> reader() {
        Txn<byte[]> w = writeTxn.get();
        if (w != null) {
            return w;
        }
        if (readTxn == null) {
            readTxn = env.txnRead();
        } else if (readStale) {
            readTxn.renew();
        }
        readStale = false;
        return readTxn;
    }

    /** Releases the read snapshot, so that pages freed by later writes can be reused. */
    private void endRead() {
        if (readTxn != null && !readStale) {
            readTxn.reset();
            readStale = true;
        }
    }

    @Override
    public void commit() {
        Txn<byte[]> t = writeTxn.get();
        if (t != null) {
            // Cleared first: LMDB ends a transaction even when its commit fails, so close() must
            // not commit it again.
            writeTxn.remove();
            try {
                t.commit();
            } finally {
                t.close();
            }
        }
    }

    @Override
    public void flush() {
        commit();
        env.sync(true);
    }

    @Override
    public long diskBytes() {
        return DirectorySize.of(dir, "lock.mdb");
    }

    @Override
    public void close() {
        if (env == null) {
            return;
        }
        try {
            flush();
        } finally {
            if (readTxn != null) {
                readTxn.close();
                readTxn = null;
            }
            readStale = false;
            tables.clear();
            env.close();
            env = null;
        }
    }

    private final class LmdbTable implements Table {
        private final Dbi<byte[]> dbi;

        LmdbTable(Dbi<byte[]> dbi) {
            this.dbi = dbi;
        }

        @Override
        public void put(byte[] key, byte[] value) {
            dbi.put(writer(), key, value);
        }

        @Override
        public byte[] get(byte[] key) {
            return dbi.get(reader(), key);
        }

        @Override
        public void delete(byte[] key) {
            dbi.delete(writer(), key);
        }

        @Override
        public long scan(byte[] from, byte[] to, long limit, ScanSink sink) {
            long n = 0;
            try (org.lmdbjava.Cursor<byte[]> c = dbi.openCursor(reader())) {
                boolean ok = from == null || from.length == 0 ? c.first() : c.get(from, GetOp.MDB_SET_RANGE);
                while (ok && n < limit) {
                    byte[] k = c.key();
                    if (to != null && ByteArrayProxy.compareArrays(k, to) >= 0) {
                        break;
                    }
                    sink.accept(k, c.val());
                    n++;
                    ok = c.next();
                }
            }
            return n;
        }
    }
}
