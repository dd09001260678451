package io.betree.bench.workload;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * Deterministic log-style rows for the compression workload: the key is a millisecond timestamp and
 * a sequence number (12 bytes, ascending); the value is one line of an application's call log with
 * a timestamp, level, service, host, procedure, duration, row count, parameters and a random trace
 * id, about 200 bytes. The same seed gives the same rows on every engine.
 */
public final class LogRows {
    private static final String[] SERVICES = {"orders-api", "billing", "inventory", "auth", "search", "shipping",
            "catalog", "payments", "notifications", "reporting", "pricing", "accounts"};
    private static final String[][] PROCEDURES = {
            {"GetOrderById", "ListOrdersByCustomer", "CreateOrder", "CancelOrder"},
            {"CreateInvoice", "ApplyCredit", "ListInvoices"},
            {"ReserveStock", "ReleaseStock", "GetStockLevel", "ListWarehouses"},
            {"Login", "RefreshToken", "Logout"},
            {"SearchProducts", "Suggest"},
            {"QuoteShipment", "CreateLabel", "TrackParcel"},
            {"GetProduct", "ListCategory", "UpdateProduct"},
            {"Authorize", "Capture", "Refund"},
            {"SendEmail", "SendSms"},
            {"DailySales", "TopCustomers", "ExportCsv"},
            {"PriceBasket", "ApplyCoupon"},
            {"GetAccount", "UpdateAddress", "ListPaymentMethods"}};
    private static final String[] LEVELS = {"INFO", "INFO", "INFO", "INFO", "INFO", "INFO", "DEBUG", "WARN"};
    private static final String[] CURRENCIES = {"EUR", "USD", "GBP", "CHF", "JPY"};
    private static final String[] REGIONS = {"eu-west", "eu-central", "us-east", "us-west", "ap-south"};
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private final SplittableRandom random;
    private long seq;
    private long millis = 1_700_000_000_000L;

    /** Rows from {@code seed}. */
    public LogRows(long seed) {
        this.random = new SplittableRandom(seed);
    }

    /** The next row's key; call {@link #value()} for its value next. */
    public byte[] key() {
        millis += random.nextInt(4);
        return ByteBuffer.allocate(12).putLong(millis).putInt((int) seq++).array();
    }

    /** The current row's value. */
    public byte[] value() {
        int s = random.nextInt(SERVICES.length);
        String proc = PROCEDURES[s][random.nextInt(PROCEDURES[s].length)];
        int duration = (int) Math.min(60_000, Math.exp(random.nextDouble() * 8));
        StringBuilder b = new StringBuilder(256);
        b.append(java.time.Instant.ofEpochMilli(millis)).append(' ').append(LEVELS[random.nextInt(LEVELS.length)])
                .append(" svc=").append(SERVICES[s]).append(" host=").append(SERVICES[s]).append('-')
                .append(random.nextInt(12)).append(" proc=").append(proc).append(" dur_ms=").append(duration)
                .append(" rows=").append(random.nextInt(4) == 0 ? random.nextInt(5000) : random.nextInt(20))
                .append(" params={\"customerId\":").append(random.nextInt(1_000_000)).append(",\"region\":\"")
                .append(REGIONS[random.nextInt(REGIONS.length)]).append("\",\"currency\":\"")
                .append(CURRENCIES[random.nextInt(CURRENCIES.length)]).append("\",\"limit\":")
                .append(10 * (1 + random.nextInt(10))).append("} status=")
                .append(random.nextInt(50) == 0 ? "ERROR" : "OK").append(" trace=");
        long t = random.nextLong();
        for (int i = 0; i < 16; i++) {
            b.append(HEX[(int) (t >>> (4 * i)) & 15]);
        }
        return b.toString().getBytes(StandardCharsets.US_ASCII);
    }
}
