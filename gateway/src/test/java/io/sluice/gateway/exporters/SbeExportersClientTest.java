package io.sluice.gateway.exporters;

import io.sluice.gateway.broker.BrokerErrorException;
import io.sluice.gateway.broker.MalformedResponseException;
import io.sluice.protocol.cluster.ExporterStatus;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.codecs.BooleanType;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ExportersStatusRequestDecoder;
import io.sluice.protocol.codecs.ExportersStatusResponseEncoder;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.message.ErrorResponseWriter;
import io.sluice.protocol.transport.MessageWriter;
import io.sluice.protocol.transport.TransportClient;
import io.sluice.protocol.transport.TransportConfig;
import io.sluice.protocol.transport.TransportServer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The SBE exporters status client against a scripted broker on a real socket. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SbeExportersClientTest
{
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private volatile int answerLength = -1;
    private volatile boolean notLeader;
    private TransportServer server;
    private TransportClient transport;
    private SbeExportersClient client;

    @BeforeEach
    void start()
    {
        server = TransportServer.start(new InetSocketAddress("127.0.0.1", 0), (buffer, offset, length, response) ->
        {
            final UnsafeBuffer view = new UnsafeBuffer(buffer, offset, length);
            final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(view, 0);
            final int partitionId = new ExportersStatusRequestDecoder().wrap(view, MessageHeaderDecoder.ENCODED_LENGTH,
                header.blockLength(), header.version()).partitionId();
            if (notLeader)
            {
                response.respond(ErrorResponseWriter.of(ErrorCode.NOT_LEADER, partitionId, 1, "not the leader"));
                return;
            }
            response.respond(answer(partitionId));
        }, TransportConfig.defaults());
        transport = new TransportClient(TransportConfig.defaults());
        client = new SbeExportersClient(transport,
            PartitionDistribution.of("127.0.0.1:" + server.localAddress().getPort(), 2, 1));
    }

    @AfterEach
    void stop() throws Exception
    {
        transport.close();
        server.close();
    }

    private MessageWriter answer(final int partitionId)
    {
        final byte[] id = "search".getBytes(StandardCharsets.UTF_8);
        final byte[] type = "opensearch".getBytes(StandardCharsets.UTF_8);
        final byte[] error = "429 es_rejected_execution_exception".getBytes(StandardCharsets.UTF_8);
        final int full = MessageHeaderEncoder.ENCODED_LENGTH + ExportersStatusResponseEncoder.BLOCK_LENGTH +
            ExportersStatusResponseEncoder.ExportersEncoder.sbeHeaderSize() + 2 *
            (ExportersStatusResponseEncoder.ExportersEncoder.sbeBlockLength() + id.length + type.length +
            ExportersStatusResponseEncoder.ExportersEncoder.exporterIdHeaderLength() +
            ExportersStatusResponseEncoder.ExportersEncoder.exporterTypeHeaderLength() +
            ExportersStatusResponseEncoder.ExportersEncoder.lastErrorHeaderLength()) +
            error.length;
        return new MessageWriter()
        {
            public int encodedLength()
            {
                return answerLength < 0 ? full : answerLength;
            }

            public void write(final MutableDirectBuffer buffer, final int offset)
            {
                final UnsafeBuffer scratch = new UnsafeBuffer(new byte[full]);
                final ExportersStatusResponseEncoder.ExportersEncoder exporters = new ExportersStatusResponseEncoder()
                    .wrapAndApplyHeader(scratch, 0, new MessageHeaderEncoder())
                    .partitionId(partitionId).exportingState(ExportingState.SOFT_PAUSED).lastPosition(120)
                    .exportersCount(2);
                exporters.next().position(118).retrying(BooleanType.TRUE).failures(3).deadLetters(1).sinkWrites(7)
                    .sinkWriteNanos(7_000_000).putExporterId(id, 0, id.length).putExporterType(type, 0, type.length)
                    .putLastError(error, 0, error.length);
                exporters.next().position(120).retrying(BooleanType.FALSE).failures(0).deadLetters(0).sinkWrites(0)
                    .sinkWriteNanos(0).putExporterId(id, 0, id.length).putExporterType(type, 0, type.length)
                    .putLastError(error, 0, 0);
                buffer.putBytes(offset, scratch, 0, encodedLength());
            }
        };
    }

    @Test
    void theAnswerDecodesToEveryExportersFigures()
    {
        final PartitionExporters answer = client.status(0, 2, TIMEOUT).join();

        assertThat(answer.partitionId()).isEqualTo(2);
        assertThat(answer.exportingState()).isEqualTo(ExportingState.SOFT_PAUSED);
        assertThat(answer.lastPosition()).isEqualTo(120);
        assertThat(answer.exporters()).containsExactly(
            new ExporterStatus("search", "opensearch", 118, true, "429 es_rejected_execution_exception", 3, 1, 7, 7_000_000),
            new ExporterStatus("search", "opensearch", 120, false, null, 0, 0, 0, 0));
    }

    @Test
    void aTruncatedAnswerFailsAsMalformedInsteadOfReadingOutOfBounds()
    {
        answerLength = MessageHeaderEncoder.ENCODED_LENGTH + ExportersStatusResponseEncoder.BLOCK_LENGTH + 20;

        assertThatThrownBy(() -> client.status(0, 1, TIMEOUT).join())
            .isInstanceOf(CompletionException.class).cause().isInstanceOf(MalformedResponseException.class);
    }

    @Test
    void aFollowersErrorAnswerFailsWithTheBrokersError()
    {
        notLeader = true;

        assertThatThrownBy(() -> client.status(0, 1, TIMEOUT).join())
            .isInstanceOf(CompletionException.class).cause().isInstanceOf(BrokerErrorException.class)
            .hasMessageContaining("not the leader");
    }

    @Test
    void aPartitionOutsideTheDistributionIsRefusedWithoutASend()
    {
        assertThatThrownBy(() -> client.status(0, 3, TIMEOUT).join()).cause()
            .isInstanceOf(IllegalArgumentException.class);
    }
}
