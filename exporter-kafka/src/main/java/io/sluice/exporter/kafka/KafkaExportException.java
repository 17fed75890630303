package io.sluice.exporter.kafka;

/** Kafka did not acknowledge every record of a call; its message is what the exporters view shows while retrying. */
public final class KafkaExportException extends Exception
{
    public KafkaExportException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
