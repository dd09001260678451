package io.betree.internal.storage;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.function.Predicate;

/**
 * A {@link StorageEnv} wrapper for tests that injects I/O faults and simulates crashes, in the spirit
 * of Lucene's {@code MockDirectoryWrapper}.
 *
 * <p><b>Faults</b> apply to files matching {@link #onlyFiles} (all by default) and are counted from
 * the moment they are set: {@link #failWrite} fails the n-th write, {@link #failWritesAfter} fails
 * every write after n more, {@link #tearWrite} writes only a prefix of the n-th write and then fails,
 * {@link #setSpaceBudget} makes writes that grow files beyond a byte budget fail with "No space left
 * on device" (after writing what fits), {@link #failSync} / {@link #failAllSyncs} fail file syncs, and
 * {@link #failReads} fails reads. Injected failures are {@link IOException}s whose message starts
 * with "simulated" (or is "No space left on device").
 *
 * <p><b>Crashes</b>: every change to a file since its last successful sync is kept in an undo log,
 * and every file creation, rename and deletion since the last {@link #syncDirectory} of its directory
 * is remembered. {@link #crash()} then behaves like a power cut: all handles and locks of this env die,
 * each file goes back to its last-synced content, and unsynced creations, renames and deletions are
 * undone. {@link #crash(Random)} is harsher and more realistic: each unsynced write may also have
 * reached the disk, whole or torn at a 512-byte boundary, and a random prefix of the unsynced metadata
 * operations survives. After a crash all faults are cleared and the env can open the files again, as
 * a restarted process would.
 *
 * <p>All methods synchronize on the env; it is built for correctness, not speed. Files larger than
 * 2 GiB are not supported for crash simulation. Real syncs are still passed to the wrapped env.
 */
public final class FaultInjectingStorageEnv extends ForwardingStorageEnv {

    private static final long NONE = Long.MAX_VALUE;

    /** Crash state of every file opened through this env since the last crash, by absolute path. */
    private final Map<Path, FileShadow> shadows = new HashMap<>();
    /** Creations, renames and deletions not yet made durable by a directory sync, oldest first. */
    private final List<MetadataOp> pendingOps = new ArrayList<>();
    private final Set<FaultInjectingFileHandle> handles = new LinkedHashSet<>();
    private final List<Closeable> locks = new ArrayList<>();

    private Predicate<Path> filter = path -> true;
    private long writes;
    private long syncs;
    private long failWriteAt = NONE;
    private long failWritesFrom = NONE;
    private long tearWriteAt = NONE;
    private int tearKeepBytes;
    private long failSyncAt = NONE;
    private boolean failAllSyncs;
    private boolean failReads;
    private long spaceLeft = NONE;
    private int crashes;

    /** Wraps {@code delegate}, with no faults armed. */
    public FaultInjectingStorageEnv(StorageEnv delegate) {
        super(Objects.requireNonNull(delegate, "delegate"));
    }

    /** Wraps the default env. */
    public FaultInjectingStorageEnv() {
        this(StorageEnv.defaultEnv());
    }

    // ---------------------------------------------------------------- fault configuration

    /** Restricts fault injection and counting to files whose path matches {@code files}. */
    public synchronized FaultInjectingStorageEnv onlyFiles(Predicate<Path> files) {
        this.filter = Objects.requireNonNull(files, "files");
        return this;
    }

    /** Makes the {@code n}-th write from now (1 = the next one) fail without writing anything. */
    public synchronized void failWrite(long n) {
        failWriteAt = writes + checkPositive(n);
    }

    /** Lets {@code n} more writes succeed and fails every one after them, until {@link #clearFaults}. */
    public synchronized void failWritesAfter(long n) {
        failWritesFrom = writes + n + 1;
    }

    /** Makes the {@code n}-th write from now write only its first {@code keepBytes} bytes, then fail. */
    public synchronized void tearWrite(long n, int keepBytes) {
        tearWriteAt = writes + checkPositive(n);
        tearKeepBytes = keepBytes;
    }

    /** Makes the {@code n}-th file sync from now (1 = the next one) fail. */
    public synchronized void failSync(long n) {
        failSyncAt = syncs + checkPositive(n);
    }

    /** Makes every file sync fail while {@code fail} is set. */
    public synchronized void failAllSyncs(boolean fail) {
        failAllSyncs = fail;
    }

    /** Makes every read fail while {@code fail} is set. */
    public synchronized void failReads(boolean fail) {
        failReads = fail;
    }

    /**
     * Lets files grow by {@code bytes} more in total (shrinking gives space back); a write that would
     * grow them further writes what fits and fails with "No space left on device".
     */
    public synchronized void setSpaceBudget(long bytes) {
        spaceLeft = bytes;
    }

    /** Disarms every fault and resets the file filter; counters keep running. */
    public synchronized void clearFaults() {
        filter = path -> true;
        failWriteAt = NONE;
        failWritesFrom = NONE;
        tearWriteAt = NONE;
        failSyncAt = NONE;
        failAllSyncs = false;
        failReads = false;
        spaceLeft = NONE;
    }

    /** Writes to matching files so far (including failed ones). */
    public synchronized long writeCount() {
        return writes;
    }

    /** File syncs of matching files so far (including failed ones). */
    public synchronized long syncCount() {
        return syncs;
    }

    /** Whether {@code path} has changes that a crash would undo. */
    public synchronized boolean hasUnsyncedChanges(Path path) {
        FileShadow shadow = shadows.get(key(path));
        return shadow != null && shadow.hasUnsyncedChanges();
    }

    private static long checkPositive(long n) {
        if (n < 1) {
            throw new IllegalArgumentException("n must be at least 1: " + n);
        }
        return n;
    }

    // ---------------------------------------------------------------- crash simulation

    /** Simulates a power cut that loses everything not synced. See the class comment. */
    public synchronized void crash() throws IOException {
        crash(null);
    }

    /**
     * Simulates a power cut after which any subset of the unsynced writes may have reached the disk,
     * some of them torn, and a prefix of the unsynced metadata operations survived; {@code random}
     * decides (null: nothing unsynced survives).
     */
    public synchronized void crash(Random random) throws IOException {
        crashes++;
        for (FaultInjectingFileHandle h : new ArrayList<>(handles)) {
            h.kill();
        }
        handles.clear();
        for (Closeable lock : locks) {
            lock.close();
        }
        locks.clear();
        for (Map.Entry<Path, FileShadow> e : shadows.entrySet()) {
            if (!e.getValue().detached() && delegate.exists(e.getKey())) {
                try (FileHandle file = delegate.open(e.getKey())) {
                    e.getValue().restore(file, random);
                }
            }
        }
        shadows.clear();
        int survivors = random == null ? 0 : random.nextInt(pendingOps.size() + 1);
        for (int i = pendingOps.size() - 1; i >= survivors; i--) {
            pendingOps.get(i).revert();
        }
        pendingOps.clear();
        clearFaults();
    }

    /** Number of crashes so far; handles opened before a crash are dead. */
    synchronized int crashCount() {
        return crashes;
    }

    // ---------------------------------------------------------------- StorageEnv

    @Override
    public synchronized FileHandle open(Path path) throws IOException {
        Path key = key(path);
        boolean existed = delegate.exists(key);
        FileHandle file = delegate.open(path);
        if (!existed) {
            pendingOps.add(new Created(key));
            FileShadow previous = shadows.remove(key);
            if (previous != null) {
                previous.detach();
            }
        }
        FileShadow shadow = shadows.computeIfAbsent(key, k -> new FileShadow());
        FaultInjectingFileHandle handle = new FaultInjectingFileHandle(this, file, shadow, crashes);
        handles.add(handle);
        return handle;
    }

    @Override
    public synchronized void delete(Path path) throws IOException {
        Path key = key(path);
        if (!delegate.exists(key)) {
            return;
        }
        byte[] image = syncedImage(key);
        delegate.delete(key);
        FileShadow shadow = shadows.remove(key);
        if (shadow != null) {
            shadow.detach();
        }
        pendingOps.add(new Deleted(key, image));
    }

    @Override
    public synchronized void rename(Path source, Path target) throws IOException {
        Path from = key(source);
        Path to = key(target);
        byte[] previousTarget = delegate.exists(to) ? syncedImage(to) : null;
        delegate.rename(from, to);
        FileShadow replaced = shadows.remove(to);
        if (replaced != null) {
            replaced.detach();
        }
        FileShadow moved = shadows.remove(from);
        if (moved != null) {
            shadows.put(to, moved);
        }
        pendingOps.add(new Renamed(from, to, previousTarget));
    }

    @Override
    public synchronized void syncDirectory(Path dir) throws IOException {
        delegate.syncDirectory(dir);
        Path key = key(dir);
        pendingOps.removeIf(op -> key.equals(op.directory()));
    }

    @Override
    public synchronized Closeable lock(Path lockFile) throws IOException {
        Closeable lock = delegate.lock(lockFile);
        locks.add(lock);
        return () -> {
            synchronized (FaultInjectingStorageEnv.this) {
                if (locks.remove(lock)) {
                    lock.close();
                }
            }
        };
    }

    // ---------------------------------------------------------------- hooks for the handles

    /**
     * Decides the fate of a write of {@code length} bytes at {@code position} to a file of
     * {@code size} bytes: how many bytes to write and whether to fail afterwards.
     */
    synchronized WritePlan planWrite(Path path, long position, int length, long size) {
        if (!filter.test(path)) {
            return new WritePlan(length, null);
        }
        writes++;
        if (writes == failWriteAt || writes >= failWritesFrom) {
            return new WritePlan(0, "simulated write failure: " + path + " at " + position);
        }
        int keep = length;
        String failure = null;
        if (writes == tearWriteAt) {
            keep = Math.max(0, Math.min(length, tearKeepBytes));
            failure = "simulated torn write: " + path + " at " + position + ", " + keep + " of " + length
                    + " bytes written";
        }
        long growth = Math.max(0, position + keep - size);
        if (growth > spaceLeft) {
            keep = (int) Math.max(0, Math.min(keep, size + spaceLeft - position));
            failure = "No space left on device";
        }
        if (spaceLeft != NONE) {
            spaceLeft -= Math.max(0, position + keep - size);
        }
        return new WritePlan(keep, failure);
    }

    /**
     * What a write does.
     *
     * @param keepBytes bytes to write
     * @param failure message of the IOException to throw afterwards, or null to succeed
     */
    record WritePlan(int keepBytes, String failure) {
    }

    /** Returns space to the budget when a file shrank by {@code bytes}. */
    synchronized void released(long bytes) {
        if (spaceLeft != NONE) {
            spaceLeft += bytes;
        }
    }

    /** Counts a sync of {@code path} and throws if it is to fail. */
    synchronized void checkSync(Path path) throws IOException {
        if (!filter.test(path)) {
            return;
        }
        syncs++;
        if (failAllSyncs || syncs == failSyncAt) {
            throw new IOException("simulated sync failure: " + path);
        }
    }

    /** Throws if reads of {@code path} are to fail. */
    synchronized void checkRead(Path path) throws IOException {
        if (failReads && filter.test(path)) {
            throw new IOException("simulated read failure: " + path);
        }
    }

    synchronized void closed(FaultInjectingFileHandle handle) {
        handles.remove(handle);
    }

    // ---------------------------------------------------------------- internals

    private static Path key(Path path) {
        return path.toAbsolutePath().normalize();
    }

    /** The content {@code path} had at its last sync. */
    private byte[] syncedImage(Path path) throws IOException {
        byte[] current;
        try (FileHandle file = delegate.open(path)) {
            long size = file.size();
            if (size > Integer.MAX_VALUE - 16) {
                throw new IOException("file too large for crash simulation: " + path);
            }
            ByteBuffer buf = ByteBuffer.allocate((int) size);
            file.readFully(buf, 0);
            current = buf.array();
        }
        FileShadow shadow = shadows.get(path);
        return shadow == null ? current : shadow.syncedImage(current);
    }

    private void writeWhole(Path path, byte[] content) throws IOException {
        try (FileHandle file = delegate.open(path)) {
            file.truncate(0);
            file.write(ByteBuffer.wrap(content), 0);
        }
    }

    /** A directory change that a crash undoes unless a directory sync made it durable. */
    private interface MetadataOp {
        /** The directory whose sync makes the change durable. */
        Path directory();

        /** Undoes the change on the wrapped env. */
        void revert() throws IOException;
    }

    private final class Created implements MetadataOp {
        private final Path path;

        Created(Path path) {
            this.path = path;
        }

        @Override
        public Path directory() {
            return path.getParent();
        }

        @Override
        public void revert() throws IOException {
            delegate.delete(path);
        }
    }

    private final class Deleted implements MetadataOp {
        private final Path path;
        private final byte[] image;

        Deleted(Path path, byte[] image) {
            this.path = path;
            this.image = image;
        }

        @Override
        public Path directory() {
            return path.getParent();
        }

        @Override
        public void revert() throws IOException {
            writeWhole(path, image);
        }
    }

    private final class Renamed implements MetadataOp {
        private final Path source;
        private final Path target;
        private final byte[] previousTarget;

        Renamed(Path source, Path target, byte[] previousTarget) {
            this.source = source;
            this.target = target;
            this.previousTarget = previousTarget;
        }

        @Override
        public Path directory() {
            return target.getParent();
        }

        @Override
        public void revert() throws IOException {
            if (delegate.exists(target)) {
                delegate.rename(target, source);
            }
            if (previousTarget != null) {
                writeWhole(target, previousTarget);
            }
        }
    }
}
