package io.betree.internal.storage;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * The seam between the engine and the file system, in the spirit of LevelDB's {@code Env}: every
 * file the engine touches is reached through one of these, so tests can wrap it to inject faults and
 * simulate crashes (see the test utility {@code FaultInjectingStorageEnv}).
 *
 * <p>Implementations are thread-safe. Metadata changes (creating, renaming and deleting files) are
 * durable only after {@link #syncDirectory} of the parent directory returns.
 */
public interface StorageEnv {

    /** Opens {@code path} for reading and writing, creating an empty file if it does not exist. */
    FileHandle open(Path path) throws IOException;

    /** Whether a file or directory exists at {@code path}. */
    boolean exists(Path path);

    /** Deletes the file at {@code path}; does nothing if there is none. */
    void delete(Path path) throws IOException;

    /**
     * Atomically renames {@code source} to {@code target}, replacing {@code target} if it exists.
     * Durable once {@link #syncDirectory} of the directory returns.
     */
    void rename(Path source, Path target) throws IOException;

    /** The entries of {@code dir}, sorted by name. */
    List<Path> list(Path dir) throws IOException;

    /** Creates {@code dir} and any missing parents; does nothing if it exists. */
    void createDirectories(Path dir) throws IOException;

    /**
     * Makes the directory's entries durable: files created, renamed or deleted in {@code dir}
     * survive a crash once this returns. A no-op on platforms that cannot sync a directory.
     */
    void syncDirectory(Path dir) throws IOException;

    /**
     * Takes an exclusive lock on {@code lockFile} (created if absent) that excludes other processes
     * and other holders in this JVM alike. The lock is held until the returned handle is closed
     * (closing it twice is harmless) or the process ends.
     *
     * @throws io.betree.internal.fault.DirectoryInUseException with the message
     *     {@code "already open by another process/environment: <dir>"} if the lock is held
     * @throws IOException if the lock file cannot be created or locked for another reason
     */
    Closeable lock(Path lockFile) throws IOException;

    /** The environment over the platform's real file system. */
    static StorageEnv defaultEnv() {
        return DefaultStorageEnv.INSTANCE;
    }
}
