package io.sluice.exporter.opensearch;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.util.RawValue;
import io.sluice.exporter.spi.CommittedRecord;
import io.sluice.exporter.spi.Exporter;
import io.sluice.exporter.spi.ExporterContext;
import io.sluice.exporter.spi.ExporterController;
import io.sluice.exporter.spi.RecordJson;
import org.apache.hc.client5.http.auth.AuthScope;
import org.apache.hc.client5.http.auth.UsernamePasswordCredentials;
import org.apache.hc.client5.http.impl.auth.BasicCredentialsProvider;
import org.apache.hc.core5.http.HttpHost;
import org.apache.hc.core5.util.Timeout;
import org.opensearch.client.json.jackson.JacksonJsonpMapper;
import org.opensearch.client.opensearch.OpenSearchClient;
import org.opensearch.client.opensearch.core.BulkRequest;
import org.opensearch.client.opensearch.core.BulkResponse;
import org.opensearch.client.opensearch.core.bulk.BulkOperation;
import org.opensearch.client.opensearch.core.bulk.BulkResponseItem;
import org.opensearch.client.transport.httpclient5.ApacheHttpClient5Transport;
import org.opensearch.client.transport.httpclient5.ApacheHttpClient5TransportBuilder;

import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Exports records into an OpenSearch index with bulk requests: one document a record, {@code _id}
 * {@code <partitionId>-<position>}, source the record's JSON ({@link RecordJson}) passed through unparsed, so a
 * record exported again overwrites itself.
 * <p>
 * Records are buffered in {@link #export} and sent from {@code export} (when the next one does not fit) or
 * {@link #flush} (when the bulk is full or its oldest record waited {@code bulk.max-delay}), never from another
 * thread: that is what keeps a pause a pause. A position is acknowledged once every document up to it was
 * indexed (or, with {@code on-rejected=dead-letter}, written to the dead-letter file). A request that fails
 * (sink down, 429, 5xx) or a bulk with documents left to send throws, and the director retries; the failed
 * documents stay buffered and are sent again before any new record joins a full buffer, so memory is bounded
 * by {@code bulk.max-records} and {@code bulk.max-bytes}.
 */
public final class OpenSearchExporter implements Exporter
{
    public static final String TYPE = "opensearch";

    private static final Timeout CONNECT_TIMEOUT = Timeout.ofSeconds(5);
    private static final Timeout RESPONSE_TIMEOUT = Timeout.ofSeconds(60);

    private OpenSearchExporterConfig config;
    private Path deadLetterFile;
    private int partitionId;
    private ExporterController controller;
    private ApacheHttpClient5Transport transport;
    private OpenSearchClient client;
    private BulkBuffer buffer;
    private boolean templateReady;
    /** A bulk failed: send what is left on the next flush, whatever its age. */
    private boolean resendDue;
    private long lastBufferedPosition = -1;

    @Override
    public void configure(final ExporterContext context)
    {
        config = OpenSearchExporterConfig.from(context.settings());
        partitionId = context.partitionId();
        deadLetterFile = context.dataDir() == null ? null : context.dataDir().resolve("exports").resolve(context.id())
            .resolve("dead-letter").resolve("partition-" + partitionId + ".jsonl");
        buffer = new BulkBuffer(config.bulkMaxRecords(), config.bulkMaxBytes(), config.bulkMaxDelay().toNanos());
    }

    /** Snapshots of the index when {@code snapshot.repository} is set (issue 26), else none. */
    @Override
    public io.sluice.exporter.spi.SinkSnapshots snapshots()
    {
        return config.snapshotRepository() == null ? null : new OpenSearchSnapshots(config);
    }

    @Override
    public void open(final ExporterController controller)
    {
        this.controller = controller;
        transport = newTransport(config);
        client = new OpenSearchClient(transport);
    }

    /** The client's recommended transport, over every configured node, with basic auth when configured; public for benchmarks. */
    public static ApacheHttpClient5Transport newTransport(final OpenSearchExporterConfig config)
    {
        final HttpHost[] hosts = new HttpHost[config.urls().size()];
        for (int i = 0; i < hosts.length; i++)
        {
            final URI url = config.urls().get(i);
            hosts[i] = new HttpHost(url.getScheme(), url.getHost(),
                url.getPort() != -1 ? url.getPort() : "https".equals(url.getScheme()) ? 443 : 9200);
        }
        final ApacheHttpClient5TransportBuilder builder = ApacheHttpClient5TransportBuilder.builder(hosts)
            .setMapper(new JacksonJsonpMapper())
            .setRequestConfigCallback(request -> request.setResponseTimeout(RESPONSE_TIMEOUT))
            .setConnectionConfigCallback(connection -> connection.setConnectTimeout(CONNECT_TIMEOUT));
        if (config.username() != null)
        {
            builder.setHttpClientConfigCallback(http ->
            {
                final BasicCredentialsProvider credentials = new BasicCredentialsProvider();
                for (final HttpHost host : hosts)
                {
                    credentials.setCredentials(new AuthScope(host),
                        new UsernamePasswordCredentials(config.username(), config.password().toCharArray()));
                }
                return http.setDefaultCredentialsProvider(credentials);
            });
        }
        return builder.build();
    }

    @Override
    public void export(final CommittedRecord record) throws Exception
    {
        if (record.position() <= lastBufferedPosition)
        {
            return; // already buffered: offered again after a failure
        }
        final byte[] bytes = RecordJson.toBytes(record);
        final int length = bytes.length;
        final String source = new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
        final String id = partitionId + "-" + record.position();
        final int size = BulkBuffer.sizeOf(id, length);
        if (!buffer.fits(size))
        {
            send(); // throws if the sink fails: the record is offered again, memory stays bounded
        }
        buffer.add(new BulkBuffer.Document(record.position(), id, source, size), System.nanoTime());
        lastBufferedPosition = record.position();
    }

    @Override
    public void flush() throws Exception
    {
        if (!buffer.isEmpty() && (resendDue || buffer.isFull() || buffer.isDue(System.nanoTime())))
        {
            send();
        }
    }

    /** Sends the buffer as one bulk request; keeps what failed and throws if anything did. */
    private void send() throws Exception
    {
        resendDue = true; // until this send completes
        if (!templateReady)
        {
            IndexTemplate.put(client, config.index());
            templateReady = true;
        }
        final List<BulkBuffer.Document> documents = buffer.documents();
        final List<BulkOperation> operations = new ArrayList<>(documents.size());
        for (final BulkBuffer.Document document : documents)
        {
            operations.add(BulkOperation.of(operation -> operation.index(index -> index
                .index(config.index())
                .id(document.id())
                .document(new RawValue(document.source())))));
        }
        final long startNanos = System.nanoTime();
        final BulkResponse response;
        try
        {
            response = client.bulk(BulkRequest.of(bulk -> bulk.operations(operations)));
        }
        finally
        {
            controller.sinkWriteCompleted(documents.size(), System.nanoTime() - startNanos);
        }
        final List<BulkResponseItem> items = response.items();
        if (items.size() != documents.size())
        {
            throw new IOException("bulk answer has " + items.size() + " items for " + documents.size() + " documents");
        }
        final Set<BulkBuffer.Document> done = new HashSet<>();
        final List<String> deadLetters = new ArrayList<>();
        String firstFailure = null;
        int failed = 0;
        for (int i = 0; i < items.size(); i++)
        {
            final BulkResponseItem item = items.get(i);
            final BulkBuffer.Document document = documents.get(i);
            final ItemOutcome outcome = ItemOutcome.of(item.status());
            if (outcome == ItemOutcome.SUCCEEDED)
            {
                done.add(document);
                continue;
            }
            final String reason = reason(item);
            if (outcome == ItemOutcome.REJECTED && config.onRejected() == OpenSearchExporterConfig.OnRejected.DEAD_LETTER)
            {
                deadLetters.add(deadLetterLine(document.source(), reason));
                done.add(document);
                continue;
            }
            failed++;
            if (firstFailure == null)
            {
                firstFailure = "document " + document.id() + ": " + reason;
            }
        }
        if (!deadLetters.isEmpty())
        {
            appendDeadLetters(deadLetters); // before acknowledging: a crash here sends them again
            controller.deadLettered(deadLetters.size());
        }
        buffer.removeIf(done::contains);
        controller.acknowledge(buffer.isEmpty() ? lastBufferedPosition : buffer.lowestPosition() - 1);
        if (failed > 0)
        {
            throw new IOException(failed + " of " + documents.size() + " documents not indexed, first " + firstFailure);
        }
        resendDue = false;
    }

    private static String reason(final BulkResponseItem item)
    {
        final StringBuilder reason = new StringBuilder().append(item.status());
        if (item.error() != null)
        {
            reason.append(' ').append(item.error().type());
            if (item.error().reason() != null)
            {
                reason.append(": ").append(item.error().reason());
            }
            if (item.error().causedBy() != null && item.error().causedBy().reason() != null)
            {
                reason.append(" (").append(item.error().causedBy().reason()).append(')');
            }
        }
        return reason.toString();
    }

    static String deadLetterLine(final String recordJson, final String reason)
    {
        return "{\"record\":" + recordJson + ",\"reason\":\"" +
            new String(JsonStringEncoder.getInstance().quoteAsString(reason)) + "\"}\n";
    }

    private void appendDeadLetters(final List<String> lines) throws IOException
    {
        if (deadLetterFile == null)
        {
            throw new IOException("no data directory for the dead-letter file");
        }
        Files.createDirectories(deadLetterFile.getParent());
        try (FileChannel channel = FileChannel.open(deadLetterFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.APPEND))
        {
            final ByteBuffer bytes = ByteBuffer.wrap(String.join("", lines).getBytes(StandardCharsets.UTF_8));
            while (bytes.hasRemaining())
            {
                channel.write(bytes);
            }
            channel.force(false);
        }
    }

    @Override
    public void close() throws IOException
    {
        if (transport != null)
        {
            transport.close();
            transport = null;
        }
    }

    /** For tests: records buffered and not yet indexed. */
    int buffered()
    {
        return buffer.size();
    }
}
