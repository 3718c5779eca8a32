package hearts.v1

import hearts.v1.TableServiceGrpc.getServiceDescriptor
import io.grpc.CallOptions
import io.grpc.CallOptions.DEFAULT
import io.grpc.Channel
import io.grpc.Metadata
import io.grpc.MethodDescriptor
import io.grpc.ServerServiceDefinition
import io.grpc.ServerServiceDefinition.builder
import io.grpc.ServiceDescriptor
import io.grpc.Status.UNIMPLEMENTED
import io.grpc.StatusException
import io.grpc.kotlin.AbstractCoroutineServerImpl
import io.grpc.kotlin.AbstractCoroutineStub
import io.grpc.kotlin.ClientCalls.serverStreamingRpc
import io.grpc.kotlin.ClientCalls.unaryRpc
import io.grpc.kotlin.ServerCalls.serverStreamingServerMethodDefinition
import io.grpc.kotlin.ServerCalls.unaryServerMethodDefinition
import io.grpc.kotlin.StubFor
import kotlin.String
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext
import kotlin.jvm.JvmOverloads
import kotlin.jvm.JvmStatic
import kotlinx.coroutines.flow.Flow

/**
 * Holder for Kotlin coroutine-based client and server APIs for hearts.v1.TableService.
 */
public object TableServiceGrpcKt {
  public const val SERVICE_NAME: String = TableServiceGrpc.SERVICE_NAME

  @JvmStatic
  public val serviceDescriptor: ServiceDescriptor
    get() = getServiceDescriptor()

  public val getTableMethod: MethodDescriptor<GetTableRequest, GetTableResponse>
    @JvmStatic
    get() = TableServiceGrpc.getGetTableMethod()

  public val listTablesMethod: MethodDescriptor<ListTablesRequest, ListTablesResponse>
    @JvmStatic
    get() = TableServiceGrpc.getListTablesMethod()

  public val createTableMethod: MethodDescriptor<CreateTableRequest, CreateTableResponse>
    @JvmStatic
    get() = TableServiceGrpc.getCreateTableMethod()

  public val deleteTableMethod: MethodDescriptor<DeleteTableRequest, DeleteTableResponse>
    @JvmStatic
    get() = TableServiceGrpc.getDeleteTableMethod()

  public val joinTableMethod: MethodDescriptor<JoinTableRequest, JoinTableResponse>
    @JvmStatic
    get() = TableServiceGrpc.getJoinTableMethod()

  public val leaveTableMethod: MethodDescriptor<LeaveTableRequest, LeaveTableResponse>
    @JvmStatic
    get() = TableServiceGrpc.getLeaveTableMethod()

  public val passCardsMethod: MethodDescriptor<PassCardsRequest, PassCardsResponse>
    @JvmStatic
    get() = TableServiceGrpc.getPassCardsMethod()

  public val playCardMethod: MethodDescriptor<PlayCardRequest, PlayCardResponse>
    @JvmStatic
    get() = TableServiceGrpc.getPlayCardMethod()

  public val rematchTableMethod: MethodDescriptor<RematchTableRequest, RematchTableResponse>
    @JvmStatic
    get() = TableServiceGrpc.getRematchTableMethod()

  public val suggestMoveMethod: MethodDescriptor<SuggestMoveRequest, SuggestMoveResponse>
    @JvmStatic
    get() = TableServiceGrpc.getSuggestMoveMethod()

  public val sendReactionMethod: MethodDescriptor<SendReactionRequest, SendReactionResponse>
    @JvmStatic
    get() = TableServiceGrpc.getSendReactionMethod()

  public val quickJoinMethod: MethodDescriptor<QuickJoinRequest, QuickJoinResponse>
    @JvmStatic
    get() = TableServiceGrpc.getQuickJoinMethod()

  public val listPlayerTablesMethod:
      MethodDescriptor<ListPlayerTablesRequest, ListPlayerTablesResponse>
    @JvmStatic
    get() = TableServiceGrpc.getListPlayerTablesMethod()

  public val watchTableMethod: MethodDescriptor<WatchTableRequest, WatchTableResponse>
    @JvmStatic
    get() = TableServiceGrpc.getWatchTableMethod()

  /**
   * A stub for issuing RPCs to a(n) hearts.v1.TableService service as suspending coroutines.
   */
  @StubFor(TableServiceGrpc::class)
  public class TableServiceCoroutineStub @JvmOverloads constructor(
    channel: Channel,
    callOptions: CallOptions = DEFAULT,
  ) : AbstractCoroutineStub<TableServiceCoroutineStub>(channel, callOptions) {
    override fun build(channel: Channel, callOptions: CallOptions): TableServiceCoroutineStub = TableServiceCoroutineStub(channel, callOptions)

    /**
     * Executes this RPC and returns the response message, suspending until the RPC completes
     * with [`Status.OK`][io.grpc.Status].  If the RPC completes with another status, a corresponding
     * [StatusException] is thrown.  If this coroutine is cancelled, the RPC is also cancelled
     * with the corresponding exception as a cause.
     *
     * @param request The request message to send to the server.
     *
     * @param headers Metadata to attach to the request.  Most users will not need this.
     *
     * @return The single response from the server.
     */
    public suspend fun getTable(request: GetTableRequest, headers: Metadata = Metadata()): GetTableResponse = unaryRpc(
      channel,
      TableServiceGrpc.getGetTableMethod(),
      request,
      callOptions,
      headers
    )

    /**
     * Executes this RPC and returns the response message, suspending until the RPC completes
     * with [`Status.OK`][io.grpc.Status].  If the RPC completes with another status, a corresponding
     * [StatusException] is thrown.  If this coroutine is cancelled, the RPC is also cancelled
     * with the corresponding exception as a cause.
     *
     * @param request The request message to send to the server.
     *
     * @param headers Metadata to attach to the request.  Most users will not need this.
     *
     * @return The single response from the server.
     */
    public suspend fun listTables(request: ListTablesRequest, headers: Metadata = Metadata()): ListTablesResponse = unaryRpc(
      channel,
      TableServiceGrpc.getListTablesMethod(),
      request,
      callOptions,
      headers
    )

    /**
     * Executes this RPC and returns the response message, suspending until the RPC completes
     * with [`Status.OK`][io.grpc.Status].  If the RPC completes with another status, a corresponding
     * [StatusException] is thrown.  If this coroutine is cancelled, the RPC is also cancelled
     * with the corresponding exception as a cause.
     *
     * @param request The request message to send to the server.
     *
     * @param headers Metadata to attach to the request.  Most users will not need this.
     *
     * @return The single response from the server.
     */
    public suspend fun createTable(request: CreateTableRequest, headers: Metadata = Metadata()): CreateTableResponse = unaryRpc(
      channel,
      TableServiceGrpc.getCreateTableMethod(),
      request,
      callOptions,
      headers
    )

    /**
     * Executes this RPC and returns the response message, suspending until the RPC completes
     * with [`Status.OK`][io.grpc.Status].  If the RPC completes with another status, a corresponding
     * [StatusException] is thrown.  If this coroutine is cancelled, the RPC is also cancelled
     * with the corresponding exception as a cause.
     *
     * @param request The request message to send to the server.
     *
     * @param headers Metadata to attach to the request.  Most users will not need this.
     *
     * @return The single response from the server.
     */
    public suspend fun deleteTable(request: DeleteTableRequest, headers: Metadata = Metadata()): DeleteTableResponse = unaryRpc(
      channel,
      TableServiceGrpc.getDeleteTableMethod(),
      request,
      callOptions,
      headers
    )

    /**
     * Executes this RPC and returns the response message, suspending until the RPC completes
     * with [`Status.OK`][io.grpc.Status].  If the RPC completes with another status, a corresponding
     * [StatusException] is thrown.  If this coroutine is cancelled, the RPC is also cancelled
     * with the corresponding exception as a cause.
     *
     * @param request The request message to send to the server.
     *
     * @param headers Metadata to attach to the request.  Most users will not need this.
     *
     * @return The single response from the server.
     */
    public suspend fun joinTable(request: JoinTableRequest, headers: Metadata = Metadata()): JoinTableResponse = unaryRpc(
      channel,
      TableServiceGrpc.getJoinTableMethod(),
      request,
      callOptions,
      headers
    )

    /**
     * Executes this RPC and returns the response message, suspending until the RPC completes
     * with [`Status.OK`][io.grpc.Status].  If the RPC completes with another status, a corresponding
     * [StatusException] is thrown.  If this coroutine is cancelled, the RPC is also cancelled
     * with the corresponding exception as a cause.
     *
     * @param request The request message to send to the server.
     *
     * @param headers Metadata to attach to the request.  Most users will not need this.
     *
     * @return The single response from the server.
     */
    public suspend fun leaveTable(request: LeaveTableRequest, headers: Metadata = Metadata()): LeaveTableResponse = unaryRpc(
      channel,
      TableServiceGrpc.getLeaveTableMethod(),
      request,
      callOptions,
      headers
    )

    /**
     * Executes this RPC and returns the response message, suspending until the RPC completes
     * with [`Status.OK`][io.grpc.Status].  If the RPC completes with another status, a corresponding
     * [StatusException] is thrown.  If this coroutine is cancelled, the RPC is also cancelled
     * with the corresponding exception as a cause.
     *
     * @param request The request message to send to the server.
     *
     * @param headers Metadata to attach to the request.  Most users will not need this.
     *
     * @return The single response from the server.
     */
    public suspend fun passCards(request: PassCardsRequest, headers: Metadata = Metadata()): PassCardsResponse = unaryRpc(
      channel,
      TableServiceGrpc.getPassCardsMethod(),
      request,
      callOptions,
      headers
    )

    /**
     * Executes this RPC and returns the response message, suspending until the RPC completes
     * with [`Status.OK`][io.grpc.Status].  If the RPC completes with another status, a corresponding
     * [StatusException] is thrown.  If this coroutine is cancelled, the RPC is also cancelled
     * with the corresponding exception as a cause.
     *
     * @param request The request message to send to the server.
     *
     * @param headers Metadata to attach to the request.  Most users will not need this.
     *
     * @return The single response from the server.
     */
    public suspend fun playCard(request: PlayCardRequest, headers: Metadata = Metadata()): PlayCardResponse = unaryRpc(
      channel,
      TableServiceGrpc.getPlayCardMethod(),
      request,
      callOptions,
      headers
    )

    /**
     * Executes this RPC and returns the response message, suspending until the RPC completes
     * with [`Status.OK`][io.grpc.Status].  If the RPC completes with another status, a corresponding
     * [StatusException] is thrown.  If this coroutine is cancelled, the RPC is also cancelled
     * with the corresponding exception as a cause.
     *
     * @param request The request message to send to the server.
     *
     * @param headers Metadata to attach to the request.  Most users will not need this.
     *
     * @return The single response from the server.
     */
    public suspend fun rematchTable(request: RematchTableRequest, headers: Metadata = Metadata()): RematchTableResponse = unaryRpc(
      channel,
      TableServiceGrpc.getRematchTableMethod(),
      request,
      callOptions,
      headers
    )

    /**
     * Executes this RPC and returns the response message, suspending until the RPC completes
     * with [`Status.OK`][io.grpc.Status].  If the RPC completes with another status, a corresponding
     * [StatusException] is thrown.  If this coroutine is cancelled, the RPC is also cancelled
     * with the corresponding exception as a cause.
     *
     * @param request The request message to send to the server.
     *
     * @param headers Metadata to attach to the request.  Most users will not need this.
     *
     * @return The single response from the server.
     */
    public suspend fun suggestMove(request: SuggestMoveRequest, headers: Metadata = Metadata()): SuggestMoveResponse = unaryRpc(
      channel,
      TableServiceGrpc.getSuggestMoveMethod(),
      request,
      callOptions,
      headers
    )

    /**
     * Executes this RPC and returns the response message, suspending until the RPC completes
     * with [`Status.OK`][io.grpc.Status].  If the RPC completes with another status, a corresponding
     * [StatusException] is thrown.  If this coroutine is cancelled, the RPC is also cancelled
     * with the corresponding exception as a cause.
     *
     * @param request The request message to send to the server.
     *
     * @param headers Metadata to attach to the request.  Most users will not need this.
     *
     * @return The single response from the server.
     */
    public suspend fun sendReaction(request: SendReactionRequest, headers: Metadata = Metadata()): SendReactionResponse = unaryRpc(
      channel,
      TableServiceGrpc.getSendReactionMethod(),
      request,
      callOptions,
      headers
    )

    /**
     * Executes this RPC and returns the response message, suspending until the RPC completes
     * with [`Status.OK`][io.grpc.Status].  If the RPC completes with another status, a corresponding
     * [StatusException] is thrown.  If this coroutine is cancelled, the RPC is also cancelled
     * with the corresponding exception as a cause.
     *
     * @param request The request message to send to the server.
     *
     * @param headers Metadata to attach to the request.  Most users will not need this.
     *
     * @return The single response from the server.
     */
    public suspend fun quickJoin(request: QuickJoinRequest, headers: Metadata = Metadata()): QuickJoinResponse = unaryRpc(
      channel,
      TableServiceGrpc.getQuickJoinMethod(),
      request,
      callOptions,
      headers
    )

    /**
     * Executes this RPC and returns the response message, suspending until the RPC completes
     * with [`Status.OK`][io.grpc.Status].  If the RPC completes with another status, a corresponding
     * [StatusException] is thrown.  If this coroutine is cancelled, the RPC is also cancelled
     * with the corresponding exception as a cause.
     *
     * @param request The request message to send to the server.
     *
     * @param headers Metadata to attach to the request.  Most users will not need this.
     *
     * @return The single response from the server.
     */
    public suspend fun listPlayerTables(request: ListPlayerTablesRequest, headers: Metadata = Metadata()): ListPlayerTablesResponse = unaryRpc(
      channel,
      TableServiceGrpc.getListPlayerTablesMethod(),
      request,
      callOptions,
      headers
    )

    /**
     * Returns a [Flow] that, when collected, executes this RPC and emits responses from the
     * server as they arrive.  That flow finishes normally if the server closes its response with
     * [`Status.OK`][io.grpc.Status], and fails by throwing a [StatusException] otherwise.  If
     * collecting the flow downstream fails exceptionally (including via cancellation), the RPC
     * is cancelled with that exception as a cause.
     *
     * @param request The request message to send to the server.
     *
     * @param headers Metadata to attach to the request.  Most users will not need this.
     *
     * @return A flow that, when collected, emits the responses from the server.
     */
    public fun watchTable(request: WatchTableRequest, headers: Metadata = Metadata()): Flow<WatchTableResponse> = serverStreamingRpc(
      channel,
      TableServiceGrpc.getWatchTableMethod(),
      request,
      callOptions,
      headers
    )
  }

  /**
   * Skeletal implementation of the hearts.v1.TableService service based on Kotlin coroutines.
   */
  public abstract class TableServiceCoroutineImplBase(
    coroutineContext: CoroutineContext = EmptyCoroutineContext,
  ) : AbstractCoroutineServerImpl(coroutineContext) {
    /**
     * Returns the response to an RPC for hearts.v1.TableService.GetTable.
     *
     * If this method fails with a [StatusException], the RPC will fail with the corresponding
     * [io.grpc.Status].  If this method fails with a [java.util.concurrent.CancellationException], the RPC will fail
     * with status `Status.CANCELLED`.  If this method fails for any other reason, the RPC will
     * fail with `Status.UNKNOWN` with the exception as a cause.
     *
     * @param request The request from the client.
     */
    public open suspend fun getTable(request: GetTableRequest): GetTableResponse = throw StatusException(UNIMPLEMENTED.withDescription("Method hearts.v1.TableService.GetTable is unimplemented"))

    /**
     * Returns the response to an RPC for hearts.v1.TableService.ListTables.
     *
     * If this method fails with a [StatusException], the RPC will fail with the corresponding
     * [io.grpc.Status].  If this method fails with a [java.util.concurrent.CancellationException], the RPC will fail
     * with status `Status.CANCELLED`.  If this method fails for any other reason, the RPC will
     * fail with `Status.UNKNOWN` with the exception as a cause.
     *
     * @param request The request from the client.
     */
    public open suspend fun listTables(request: ListTablesRequest): ListTablesResponse = throw StatusException(UNIMPLEMENTED.withDescription("Method hearts.v1.TableService.ListTables is unimplemented"))

    /**
     * Returns the response to an RPC for hearts.v1.TableService.CreateTable.
     *
     * If this method fails with a [StatusException], the RPC will fail with the corresponding
     * [io.grpc.Status].  If this method fails with a [java.util.concurrent.CancellationException], the RPC will fail
     * with status `Status.CANCELLED`.  If this method fails for any other reason, the RPC will
     * fail with `Status.UNKNOWN` with the exception as a cause.
     *
     * @param request The request from the client.
     */
    public open suspend fun createTable(request: CreateTableRequest): CreateTableResponse = throw StatusException(UNIMPLEMENTED.withDescription("Method hearts.v1.TableService.CreateTable is unimplemented"))

    /**
     * Returns the response to an RPC for hearts.v1.TableService.DeleteTable.
     *
     * If this method fails with a [StatusException], the RPC will fail with the corresponding
     * [io.grpc.Status].  If this method fails with a [java.util.concurrent.CancellationException], the RPC will fail
     * with status `Status.CANCELLED`.  If this method fails for any other reason, the RPC will
     * fail with `Status.UNKNOWN` with the exception as a cause.
     *
     * @param request The request from the client.
     */
    public open suspend fun deleteTable(request: DeleteTableRequest): DeleteTableResponse = throw StatusException(UNIMPLEMENTED.withDescription("Method hearts.v1.TableService.DeleteTable is unimplemented"))

    /**
     * Returns the response to an RPC for hearts.v1.TableService.JoinTable.
     *
     * If this method fails with a [StatusException], the RPC will fail with the corresponding
     * [io.grpc.Status].  If this method fails with a [java.util.concurrent.CancellationException], the RPC will fail
     * with status `Status.CANCELLED`.  If this method fails for any other reason, the RPC will
     * fail with `Status.UNKNOWN` with the exception as a cause.
     *
     * @param request The request from the client.
     */
    public open suspend fun joinTable(request: JoinTableRequest): JoinTableResponse = throw StatusException(UNIMPLEMENTED.withDescription("Method hearts.v1.TableService.JoinTable is unimplemented"))

    /**
     * Returns the response to an RPC for hearts.v1.TableService.LeaveTable.
     *
     * If this method fails with a [StatusException], the RPC will fail with the corresponding
     * [io.grpc.Status].  If this method fails with a [java.util.concurrent.CancellationException], the RPC will fail
     * with status `Status.CANCELLED`.  If this method fails for any other reason, the RPC will
     * fail with `Status.UNKNOWN` with the exception as a cause.
     *
     * @param request The request from the client.
     */
    public open suspend fun leaveTable(request: LeaveTableRequest): LeaveTableResponse = throw StatusException(UNIMPLEMENTED.withDescription("Method hearts.v1.TableService.LeaveTable is unimplemented"))

    /**
     * Returns the response to an RPC for hearts.v1.TableService.PassCards.
     *
     * If this method fails with a [StatusException], the RPC will fail with the corresponding
     * [io.grpc.Status].  If this method fails with a [java.util.concurrent.CancellationException], the RPC will fail
     * with status `Status.CANCELLED`.  If this method fails for any other reason, the RPC will
     * fail with `Status.UNKNOWN` with the exception as a cause.
     *
     * @param request The request from the client.
     */
    public open suspend fun passCards(request: PassCardsRequest): PassCardsResponse = throw StatusException(UNIMPLEMENTED.withDescription("Method hearts.v1.TableService.PassCards is unimplemented"))

    /**
     * Returns the response to an RPC for hearts.v1.TableService.PlayCard.
     *
     * If this method fails with a [StatusException], the RPC will fail with the corresponding
     * [io.grpc.Status].  If this method fails with a [java.util.concurrent.CancellationException], the RPC will fail
     * with status `Status.CANCELLED`.  If this method fails for any other reason, the RPC will
     * fail with `Status.UNKNOWN` with the exception as a cause.
     *
     * @param request The request from the client.
     */
    public open suspend fun playCard(request: PlayCardRequest): PlayCardResponse = throw StatusException(UNIMPLEMENTED.withDescription("Method hearts.v1.TableService.PlayCard is unimplemented"))

    /**
     * Returns the response to an RPC for hearts.v1.TableService.RematchTable.
     *
     * If this method fails with a [StatusException], the RPC will fail with the corresponding
     * [io.grpc.Status].  If this method fails with a [java.util.concurrent.CancellationException], the RPC will fail
     * with status `Status.CANCELLED`.  If this method fails for any other reason, the RPC will
     * fail with `Status.UNKNOWN` with the exception as a cause.
     *
     * @param request The request from the client.
     */
    public open suspend fun rematchTable(request: RematchTableRequest): RematchTableResponse = throw StatusException(UNIMPLEMENTED.withDescription("Method hearts.v1.TableService.RematchTable is unimplemented"))

    /**
     * Returns the response to an RPC for hearts.v1.TableService.SuggestMove.
     *
     * If this method fails with a [StatusException], the RPC will fail with the corresponding
     * [io.grpc.Status].  If this method fails with a [java.util.concurrent.CancellationException], the RPC will fail
     * with status `Status.CANCELLED`.  If this method fails for any other reason, the RPC will
     * fail with `Status.UNKNOWN` with the exception as a cause.
     *
     * @param request The request from the client.
     */
    public open suspend fun suggestMove(request: SuggestMoveRequest): SuggestMoveResponse = throw StatusException(UNIMPLEMENTED.withDescription("Method hearts.v1.TableService.SuggestMove is unimplemented"))

    /**
     * Returns the response to an RPC for hearts.v1.TableService.SendReaction.
     *
     * If this method fails with a [StatusException], the RPC will fail with the corresponding
     * [io.grpc.Status].  If this method fails with a [java.util.concurrent.CancellationException], the RPC will fail
     * with status `Status.CANCELLED`.  If this method fails for any other reason, the RPC will
     * fail with `Status.UNKNOWN` with the exception as a cause.
     *
     * @param request The request from the client.
     */
    public open suspend fun sendReaction(request: SendReactionRequest): SendReactionResponse = throw StatusException(UNIMPLEMENTED.withDescription("Method hearts.v1.TableService.SendReaction is unimplemented"))

    /**
     * Returns the response to an RPC for hearts.v1.TableService.QuickJoin.
     *
     * If this method fails with a [StatusException], the RPC will fail with the corresponding
     * [io.grpc.Status].  If this method fails with a [java.util.concurrent.CancellationException], the RPC will fail
     * with status `Status.CANCELLED`.  If this method fails for any other reason, the RPC will
     * fail with `Status.UNKNOWN` with the exception as a cause.
     *
     * @param request The request from the client.
     */
    public open suspend fun quickJoin(request: QuickJoinRequest): QuickJoinResponse = throw StatusException(UNIMPLEMENTED.withDescription("Method hearts.v1.TableService.QuickJoin is unimplemented"))

    /**
     * Returns the response to an RPC for hearts.v1.TableService.ListPlayerTables.
     *
     * If this method fails with a [StatusException], the RPC will fail with the corresponding
     * [io.grpc.Status].  If this method fails with a [java.util.concurrent.CancellationException], the RPC will fail
     * with status `Status.CANCELLED`.  If this method fails for any other reason, the RPC will
     * fail with `Status.UNKNOWN` with the exception as a cause.
     *
     * @param request The request from the client.
     */
    public open suspend fun listPlayerTables(request: ListPlayerTablesRequest): ListPlayerTablesResponse = throw StatusException(UNIMPLEMENTED.withDescription("Method hearts.v1.TableService.ListPlayerTables is unimplemented"))

    /**
     * Returns a [Flow] of responses to an RPC for hearts.v1.TableService.WatchTable.
     *
     * If creating or collecting the returned flow fails with a [StatusException], the RPC
     * will fail with the corresponding [io.grpc.Status].  If it fails with a
     * [java.util.concurrent.CancellationException], the RPC will fail with status `Status.CANCELLED`.  If creating
     * or collecting the returned flow fails for any other reason, the RPC will fail with
     * `Status.UNKNOWN` with the exception as a cause.
     *
     * @param request The request from the client.
     */
    public open fun watchTable(request: WatchTableRequest): Flow<WatchTableResponse> = throw StatusException(UNIMPLEMENTED.withDescription("Method hearts.v1.TableService.WatchTable is unimplemented"))

    final override fun bindService(): ServerServiceDefinition = builder(getServiceDescriptor())
      .addMethod(unaryServerMethodDefinition(
      context = this.context,
      descriptor = TableServiceGrpc.getGetTableMethod(),
      implementation = ::getTable
    ))
      .addMethod(unaryServerMethodDefinition(
      context = this.context,
      descriptor = TableServiceGrpc.getListTablesMethod(),
      implementation = ::listTables
    ))
      .addMethod(unaryServerMethodDefinition(
      context = this.context,
      descriptor = TableServiceGrpc.getCreateTableMethod(),
      implementation = ::createTable
    ))
      .addMethod(unaryServerMethodDefinition(
      context = this.context,
      descriptor = TableServiceGrpc.getDeleteTableMethod(),
      implementation = ::deleteTable
    ))
      .addMethod(unaryServerMethodDefinition(
      context = this.context,
      descriptor = TableServiceGrpc.getJoinTableMethod(),
      implementation = ::joinTable
    ))
      .addMethod(unaryServerMethodDefinition(
      context = this.context,
      descriptor = TableServiceGrpc.getLeaveTableMethod(),
      implementation = ::leaveTable
    ))
      .addMethod(unaryServerMethodDefinition(
      context = this.context,
      descriptor = TableServiceGrpc.getPassCardsMethod(),
      implementation = ::passCards
    ))
      .addMethod(unaryServerMethodDefinition(
      context = this.context,
      descriptor = TableServiceGrpc.getPlayCardMethod(),
      implementation = ::playCard
    ))
      .addMethod(unaryServerMethodDefinition(
      context = this.context,
      descriptor = TableServiceGrpc.getRematchTableMethod(),
      implementation = ::rematchTable
    ))
      .addMethod(unaryServerMethodDefinition(
      context = this.context,
      descriptor = TableServiceGrpc.getSuggestMoveMethod(),
      implementation = ::suggestMove
    ))
      .addMethod(unaryServerMethodDefinition(
      context = this.context,
      descriptor = TableServiceGrpc.getSendReactionMethod(),
      implementation = ::sendReaction
    ))
      .addMethod(unaryServerMethodDefinition(
      context = this.context,
      descriptor = TableServiceGrpc.getQuickJoinMethod(),
      implementation = ::quickJoin
    ))
      .addMethod(unaryServerMethodDefinition(
      context = this.context,
      descriptor = TableServiceGrpc.getListPlayerTablesMethod(),
      implementation = ::listPlayerTables
    ))
      .addMethod(serverStreamingServerMethodDefinition(
      context = this.context,
      descriptor = TableServiceGrpc.getWatchTableMethod(),
      implementation = ::watchTable
    )).build()
  }
}
