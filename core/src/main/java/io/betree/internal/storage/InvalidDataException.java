package io.betree.internal.storage;

/**
 * Internal signal that bytes read from a file failed a format check. Parsers throw it with a short
 * description; {@link BlockFile} turns it into a {@link io.betree.internal.fault.CorruptionException} that names
 * the file, block and offset, which the parsers do not know.
 */
final class InvalidDataException extends Exception {
    private static final long serialVersionUID = 1L;

    /** Creates the signal with a description of the problem. */
    InvalidDataException(String problem) {
        super(problem, null, false, false);
    }
}
