package io.betree.internal.storage;

import io.betree.internal.fault.DirectoryInUseException;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Stream;

/**
 * {@link StorageEnv} over the platform's file system with {@link FileChannel}s.
 *
 * <p>Locks combine an OS file lock ({@link FileChannel#tryLock()}, which excludes other processes)
 * with a JVM-wide registry of held lock files keyed by their real path (which excludes a second
 * holder in this JVM even through a symbolic link or a different spelling of the path, and gives a
 * clear message instead of {@link OverlappingFileLockException}).
 */
final class DefaultStorageEnv implements StorageEnv {

    /** The shared instance returned by {@link StorageEnv#defaultEnv()}. */
    static final DefaultStorageEnv INSTANCE = new DefaultStorageEnv();

    /** Real paths of lock files held by this JVM. */
    private static final Set<Path> HELD_LOCKS = ConcurrentHashMap.newKeySet();

    private static final boolean WINDOWS =
            System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("windows");

    private DefaultStorageEnv() {
    }

    @Override
    public FileHandle open(Path path) throws IOException {
        return new DefaultFileHandle(path);
    }

    @Override
    public boolean exists(Path path) {
        return Files.exists(path);
    }

    @Override
    public void delete(Path path) throws IOException {
        Files.deleteIfExists(path);
    }

    @Override
    public void rename(Path source, Path target) throws IOException {
        try {
            Files.move(source, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            throw new IOException("cannot rename " + source + " to " + target + " atomically", e);
        }
    }

    @Override
    public List<Path> list(Path dir) throws IOException {
        List<Path> result = new ArrayList<>();
        try (Stream<Path> entries = Files.list(dir)) {
            entries.forEach(result::add);
        }
        Collections.sort(result);
        return result;
    }

    @Override
    public void createDirectories(Path dir) throws IOException {
        Files.createDirectories(dir);
    }

    @Override
    public void syncDirectory(Path dir) throws IOException {
        if (WINDOWS) {
            return; // Windows cannot open a directory as a channel; NTFS journals metadata itself.
        }
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    @Override
    public Closeable lock(Path lockFile) throws IOException {
        Path dir = lockFile.toAbsolutePath().getParent();
        FileChannel ch = FileChannel.open(lockFile, StandardOpenOption.READ, StandardOpenOption.WRITE,
                StandardOpenOption.CREATE);
        Path key;
        try {
            key = lockFile.toRealPath();
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
        if (!HELD_LOCKS.add(key)) {
            ch.close();
            throw conflict(dir, "held by this JVM");
        }
        FileLock lock;
        try {
            lock = ch.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null;
        } catch (IOException | RuntimeException e) {
            HELD_LOCKS.remove(key);
            ch.close();
            throw e;
        }
        if (lock == null) {
            String holder = readHolder(ch);
            HELD_LOCKS.remove(key);
            ch.close();
            throw conflict(dir, holder);
        }
        try {
            writeHolder(ch);
        } catch (IOException e) {
            // The pid is only a diagnostic; the lock itself is held.
        }
        return new HeldLock(key, lock, ch);
    }

    private static DirectoryInUseException conflict(Path dir, String holder) {
        return new DirectoryInUseException("already open by another process/environment: " + dir
                + (holder.isEmpty() ? "" : " (" + holder + ")"));
    }

    /** Records this process's id in the lock file, for the message another process shows. */
    private static void writeHolder(FileChannel ch) throws IOException {
        byte[] text = ("pid " + ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII);
        ch.truncate(0);
        ByteBuffer buf = ByteBuffer.wrap(text);
        long pos = 0;
        while (buf.hasRemaining()) {
            pos += ch.write(buf, pos);
        }
    }

    /** The holder recorded in the lock file, "lock held by pid N", or "" when unreadable. */
    private static String readHolder(FileChannel ch) {
        try {
            ByteBuffer buf = ByteBuffer.allocate(64);
            ch.read(buf, 0);
            String text = new String(buf.array(), 0, buf.position(), StandardCharsets.US_ASCII).trim();
            return text.matches("pid \\d+") ? "lock held by " + text : "";
        } catch (IOException e) {
            return "";
        }
    }

    /** A held lock; closing releases the OS lock, the channel and the registry entry once. */
    private static final class HeldLock implements Closeable {
        private final Path key;
        private final FileLock lock;
        private final FileChannel channel;
        private boolean released;
        /** Serializes close; a lock, not a monitor, since closing does I/O. */
        private final ReentrantLock closing = new ReentrantLock();

        HeldLock(Path key, FileLock lock, FileChannel channel) {
            this.key = key;
            this.lock = lock;
            this.channel = channel;
        }

        @Override
        public void close() throws IOException {
            closing.lock();
            try {
                if (released) {
                    return;
                }
                released = true;
                try {
                    if (channel.isOpen()) {
                        lock.release();
                    }
                } finally {
                    try {
                        channel.close();
                    } finally {
                        HELD_LOCKS.remove(key);
                    }
                }
            } finally {
                closing.unlock();
            }
        }
    }
}
