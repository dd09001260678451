/**
 * The write-ahead log: typed log records ({@link io.betree.internal.log.LogRecordType} and the payload
 * codecs {@link io.betree.internal.log.CommitRecord} and {@link io.betree.internal.log.CreateIndexRecord}),
 * the segmented, checksummed log itself
 * ({@link io.betree.internal.log.WriteAheadLog}, with group commit) and a read-only reader
 * ({@link io.betree.internal.log.LogReader}). Every file is reached through
 * {@link io.betree.internal.storage.StorageEnv}. The on-disk format is described in
 * {@code docs/log-format.md}.
 */
package io.betree.internal.log;
