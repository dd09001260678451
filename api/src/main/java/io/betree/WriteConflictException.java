package io.betree;

/**
 * A transaction wrote a key that another transaction committed after this one's snapshot was taken
 * (first committer wins). Thrown at once by the write when the other commit came first, otherwise
 * by {@link Transaction#commit()}; either way the transaction is aborted and may be retried.
 */
public class WriteConflictException extends BetreeException {
    private static final long serialVersionUID = 1L;

    /** Creates an exception naming the index and, where printable, the key. */
    public WriteConflictException(String message) {
        super(message);
    }
}
