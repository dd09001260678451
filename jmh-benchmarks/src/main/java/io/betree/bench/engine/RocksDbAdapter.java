package io.betree.bench.engine;

import io.betree.Codec;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.CompressionType;
import org.rocksdb.DBOptions;
import org.rocksdb.FlushOptions;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteBufferManager;
import org.rocksdb.WriteOptions;

/**
 * RocksDB (rocksdbjni) held to the same budget as betree: one LRU block cache of the whole budget,
 * with the memtables charged to it by a {@link WriteBufferManager} (a quarter of the budget) and
 * index and filter blocks cached in it, so cache plus write buffers never exceed the budget. One
 * column family per table, leveled compaction, 10-bit Bloom filters, the chosen codec at its
 * default level on every level, two background jobs (the machine's two cores). A batch is one
 * {@link WriteBatch} per thread, reused after each write. Durability matches betree's: every batch
 * goes to the write-ahead log; with {@code sync} each commit syncs it, without it the log is left
 * to the operating system.
 *
 * <p>Every column family has RocksDB's built-in {@code uint64add} merge operator, which only a
 * merge calls (puts, gets and scans of other workloads never meet it). Its {@link #updates()}: a
 * counter increment is a merge operand of that operator, which reads 8-byte little-endian
 * counters; there is no blind field write (rocksdbjni offers no operator for one and runs no Java
 * merge operator); a read-modify-write is a plain get, then a put into the thread's batch, since
 * plain RocksDB has no transactions; a range delete is {@code RocksDB.deleteRange} (a range
 * tombstone) with the batches' write options, and there is no broadcast update.
 */
public final class RocksDbAdapter implements EngineAdapter {
    /** Engine name. */
    public static final String NAME = "rocksdb";
    /** The built-in merge operator of every column family. */
    public static final String MERGE_OPERATOR = "uint64add";

    private Path dir;
    private RocksDB db;
    private LRUCache cache;
    private WriteBufferManager writeBuffers;
    private DBOptions dbOptions;
    private ColumnFamilyOptions cfOptions;
    private WriteOptions writeOptions;
    private ReadOptions readOptions;
    private ThreadLocal<WriteBatch> batch;
    /** Every thread's batch since {@link #open}, closed with the store. */
    private final List<WriteBatch> batches = new ArrayList<>();
    private final Map<String, ColumnFamilyHandle> handles = new HashMap<>();
    private final Map<String, Table> tables = new HashMap<>();
    private final Updates updates = new RocksUpdates();

    static {
        RocksDB.loadLibrary();
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public boolean supports(Codec codec) {
        return codec != Codec.XZ;
    }

    private static CompressionType compression(Codec codec) {
        switch (codec) {
            case NONE:
                return CompressionType.NO_COMPRESSION;
            case LZ4:
                return CompressionType.LZ4_COMPRESSION;
            case ZSTD:
                return CompressionType.ZSTD_COMPRESSION;
            case DEFLATE:
                return CompressionType.ZLIB_COMPRESSION;
            default:
                throw new IllegalArgumentException("RocksDB has no " + codec + " compression");
        }
    }

    @Override
    public void open(Path dir, EngineSettings settings) {
        if (db != null) {
            throw new IllegalStateException("already open");
        }
        if (!supports(settings.codec())) {
            throw new IllegalArgumentException("RocksDB has no " + settings.codec() + " compression");
        }
        this.dir = dir;
        long budget = settings.budgetBytes();
        cache = new LRUCache(budget);
        writeBuffers = new WriteBufferManager(budget / 4, cache);
        dbOptions = new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true)
                .setWriteBufferManager(writeBuffers).setMaxBackgroundJobs(2).setIncreaseParallelism(2)
                .setInfoLogLevel(InfoLogLevel.WARN_LEVEL).setKeepLogFileNum(2);
        BlockBasedTableConfig table = new BlockBasedTableConfig().setBlockCache(cache)
                .setCacheIndexAndFilterBlocks(true).setPinL0FilterAndIndexBlocksInCache(true)
                .setFilterPolicy(new BloomFilter(10, false));
        CompressionType type = compression(settings.codec());
        cfOptions = new ColumnFamilyOptions().setTableFormatConfig(table).setCompressionType(type)
                .setBottommostCompressionType(type).setWriteBufferSize(budget / 8).setMaxWriteBufferNumber(2)
                .setMergeOperatorName(MERGE_OPERATOR);
        writeOptions = new WriteOptions();
        // Like betree: every batch is logged; with sync the log is synced at each commit.
        writeOptions.setSync(settings.sync());
        readOptions = new ReadOptions();
        batch = ThreadLocal.withInitial(this::newBatch);
        try {
            Files.createDirectories(dir);
            List<byte[]> names = new ArrayList<>();
            try (Options listing = new Options()) {
                names.addAll(RocksDB.listColumnFamilies(listing, dir.toString()));
            }
            if (names.isEmpty()) {
                names.add(RocksDB.DEFAULT_COLUMN_FAMILY);
            }
            List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
            for (byte[] n : names) {
                descriptors.add(new ColumnFamilyDescriptor(n, cfOptions));
            }
            List<ColumnFamilyHandle> opened = new ArrayList<>();
            db = RocksDB.open(dbOptions, dir.toString(), descriptors, opened);
            for (int i = 0; i < names.size(); i++) {
                handles.put(new String(names.get(i), java.nio.charset.StandardCharsets.UTF_8), opened.get(i));
            }
        } catch (RocksDBException | java.io.IOException e) {
            closeResources();
            throw new IllegalStateException("opening RocksDB in " + dir + ": " + e.getMessage(), e);
        }
    }

    @Override
    public Table table(String name) {
        return tables.computeIfAbsent(name, n -> new RocksTable(handle(n)));
    }

    private ColumnFamilyHandle handle(String name) {
        ColumnFamilyHandle h = handles.get(name);
        if (h == null) {
            try {
                h = db.createColumnFamily(new ColumnFamilyDescriptor(
                        name.getBytes(java.nio.charset.StandardCharsets.UTF_8), cfOptions));
            } catch (RocksDBException e) {
                throw new IllegalStateException(e);
            }
            handles.put(name, h);
        }
        return h;
    }

    private WriteBatch newBatch() {
        WriteBatch b = new WriteBatch();
        synchronized (batches) {
            batches.add(b);
        }
        return b;
    }

    @Override
    public void commit() {
        WriteBatch b = batch.get();
        if (b.count() == 0) {
            return;
        }
        try {
            db.write(writeOptions, b);
        } catch (RocksDBException e) {
            throw new IllegalStateException(e);
        }
        b.clear();
    }

    @Override
    public void flush() {
        commit();
        try (FlushOptions fo = new FlushOptions().setWaitForFlush(true)) {
            db.flush(fo, new ArrayList<>(handles.values()));
        } catch (RocksDBException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public long diskBytes() {
        return DirectorySize.of(dir, "LOG");
    }

    @Override
    public Updates updates() {
        return updates;
    }

    @Override
    public void close() {
        if (db == null) {
            return;
        }
        try {
            flush();
        } finally {
            closeResources();
        }
    }

    private void closeResources() {
        tables.clear();
        for (ColumnFamilyHandle h : handles.values()) {
            h.close();
        }
        handles.clear();
        if (db != null) {
            try {
                db.closeE();
            } catch (RocksDBException e) {
                throw new IllegalStateException(e);
            } finally {
                db = null;
            }
        }
        List<AutoCloseable> resources;
        synchronized (batches) {
            resources = new ArrayList<>(batches);
            batches.clear();
        }
        batch = null;
        resources.addAll(Arrays.asList(readOptions, writeOptions, cfOptions, dbOptions, writeBuffers, cache));
        for (AutoCloseable c : resources) {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception ignored) {
                    // Native handles of a store being closed; nothing left to do.
                }
            }
        }
    }

    /** Counter increments as {@code uint64add} merge operands; read-modify-write as get, then put. */
    private final class RocksUpdates implements Updates {
        @Override
        public String blindAddName() {
            return "merge";
        }

        @Override
        public byte[] encodeCounter(long n) {
            return ByteBuffer.allocate(COUNTER_BYTES).order(ByteOrder.LITTLE_ENDIAN).putLong(n).array();
        }

        @Override
        public long decodeCounter(byte[] value) {
            return value == null ? 0 : ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN).getLong();
        }

        @Override
        public void addToCounter(Table table, byte[] key, long delta) {
            try {
                batch.get().merge(((RocksTable) table).cf, key, encodeCounter(delta));
            } catch (RocksDBException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public boolean hasBlindFieldWrite() {
            return false;
        }

        @Override
        public void setField(Table table, byte[] key, int offset, byte[] field) {
            throw new UnsupportedOperationException("RocksDB has no merge operator that sets a field");
        }

        @Override
        public boolean isolatedReadModifyWrite() {
            return false;
        }

        @Override
        public int inBatch(Runnable body) {
            body.run();
            commit();
            return 0;
        }

        @Override
        public byte[] readInBatch(Table table, byte[] key) {
            return table.get(key);
        }

        @Override
        public boolean hasBroadcast() {
            return false;
        }

        @Override
        public void appendToAll(Table table, byte[] suffix) {
            throw new UnsupportedOperationException("RocksDB has no update of every row");
        }

        @Override
        public void deleteRange(Table table, byte[] fromInclusive, byte[] toExclusive) {
            Objects.requireNonNull(toExclusive, "toExclusive");
            commit();
            try {
                db.deleteRange(((RocksTable) table).cf, writeOptions,
                        fromInclusive == null ? new byte[0] : fromInclusive, toExclusive);
            } catch (RocksDBException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private final class RocksTable implements Table {
        private final ColumnFamilyHandle cf;

        RocksTable(ColumnFamilyHandle cf) {
            this.cf = cf;
        }

        @Override
        public void put(byte[] key, byte[] value) {
            try {
                batch.get().put(cf, key, value);
            } catch (RocksDBException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public byte[] get(byte[] key) {
            try {
                return db.get(cf, readOptions, key);
            } catch (RocksDBException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void delete(byte[] key) {
            try {
                batch.get().delete(cf, key);
            } catch (RocksDBException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public long scan(byte[] from, byte[] to, long limit, ScanSink sink) {
            long n = 0;
            try (ReadOptions ro = new ReadOptions(); Slice upper = to == null ? null : new Slice(to)) {
                if (upper != null) {
                    ro.setIterateUpperBound(upper);
                }
                try (RocksIterator it = db.newIterator(cf, ro)) {
                    if (from == null || from.length == 0) {
                        it.seekToFirst();
                    } else {
                        it.seek(from);
                    }
                    while (n < limit && it.isValid()) {
                        sink.accept(it.key(), it.value());
                        n++;
                        it.next();
                    }
                }
            }
            return n;
        }
    }
}
