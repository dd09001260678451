/**
 * The storage layer: the file-system seam ({@link io.betree.internal.storage.StorageEnv},
 * {@link io.betree.internal.storage.FileHandle}) and the block file
 * ({@link io.betree.internal.storage.BlockFile}), which stores compressed, checksummed logical blocks
 * copy-on-write behind a block translation table made durable by checkpoints. The on-disk format is
 * described in {@code docs/format.md}.
 */
package io.betree.internal.storage;
