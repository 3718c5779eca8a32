package hearts.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * TableService hosts Hearts tables and the games played at them.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class TableServiceGrpc {

  private TableServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "hearts.v1.TableService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<hearts.v1.GetTableRequest,
      hearts.v1.GetTableResponse> getGetTableMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetTable",
      requestType = hearts.v1.GetTableRequest.class,
      responseType = hearts.v1.GetTableResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<hearts.v1.GetTableRequest,
      hearts.v1.GetTableResponse> getGetTableMethod() {
    io.grpc.MethodDescriptor<hearts.v1.GetTableRequest, hearts.v1.GetTableResponse> getGetTableMethod;
    if ((getGetTableMethod = TableServiceGrpc.getGetTableMethod) == null) {
      synchronized (TableServiceGrpc.class) {
        if ((getGetTableMethod = TableServiceGrpc.getGetTableMethod) == null) {
          TableServiceGrpc.getGetTableMethod = getGetTableMethod =
              io.grpc.MethodDescriptor.<hearts.v1.GetTableRequest, hearts.v1.GetTableResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetTable"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.GetTableRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.GetTableResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TableServiceMethodDescriptorSupplier("GetTable"))
              .build();
        }
      }
    }
    return getGetTableMethod;
  }

  private static volatile io.grpc.MethodDescriptor<hearts.v1.ListTablesRequest,
      hearts.v1.ListTablesResponse> getListTablesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListTables",
      requestType = hearts.v1.ListTablesRequest.class,
      responseType = hearts.v1.ListTablesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<hearts.v1.ListTablesRequest,
      hearts.v1.ListTablesResponse> getListTablesMethod() {
    io.grpc.MethodDescriptor<hearts.v1.ListTablesRequest, hearts.v1.ListTablesResponse> getListTablesMethod;
    if ((getListTablesMethod = TableServiceGrpc.getListTablesMethod) == null) {
      synchronized (TableServiceGrpc.class) {
        if ((getListTablesMethod = TableServiceGrpc.getListTablesMethod) == null) {
          TableServiceGrpc.getListTablesMethod = getListTablesMethod =
              io.grpc.MethodDescriptor.<hearts.v1.ListTablesRequest, hearts.v1.ListTablesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListTables"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.ListTablesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.ListTablesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TableServiceMethodDescriptorSupplier("ListTables"))
              .build();
        }
      }
    }
    return getListTablesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<hearts.v1.CreateTableRequest,
      hearts.v1.CreateTableResponse> getCreateTableMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CreateTable",
      requestType = hearts.v1.CreateTableRequest.class,
      responseType = hearts.v1.CreateTableResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<hearts.v1.CreateTableRequest,
      hearts.v1.CreateTableResponse> getCreateTableMethod() {
    io.grpc.MethodDescriptor<hearts.v1.CreateTableRequest, hearts.v1.CreateTableResponse> getCreateTableMethod;
    if ((getCreateTableMethod = TableServiceGrpc.getCreateTableMethod) == null) {
      synchronized (TableServiceGrpc.class) {
        if ((getCreateTableMethod = TableServiceGrpc.getCreateTableMethod) == null) {
          TableServiceGrpc.getCreateTableMethod = getCreateTableMethod =
              io.grpc.MethodDescriptor.<hearts.v1.CreateTableRequest, hearts.v1.CreateTableResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CreateTable"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.CreateTableRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.CreateTableResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TableServiceMethodDescriptorSupplier("CreateTable"))
              .build();
        }
      }
    }
    return getCreateTableMethod;
  }

  private static volatile io.grpc.MethodDescriptor<hearts.v1.DeleteTableRequest,
      hearts.v1.DeleteTableResponse> getDeleteTableMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteTable",
      requestType = hearts.v1.DeleteTableRequest.class,
      responseType = hearts.v1.DeleteTableResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<hearts.v1.DeleteTableRequest,
      hearts.v1.DeleteTableResponse> getDeleteTableMethod() {
    io.grpc.MethodDescriptor<hearts.v1.DeleteTableRequest, hearts.v1.DeleteTableResponse> getDeleteTableMethod;
    if ((getDeleteTableMethod = TableServiceGrpc.getDeleteTableMethod) == null) {
      synchronized (TableServiceGrpc.class) {
        if ((getDeleteTableMethod = TableServiceGrpc.getDeleteTableMethod) == null) {
          TableServiceGrpc.getDeleteTableMethod = getDeleteTableMethod =
              io.grpc.MethodDescriptor.<hearts.v1.DeleteTableRequest, hearts.v1.DeleteTableResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteTable"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.DeleteTableRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.DeleteTableResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TableServiceMethodDescriptorSupplier("DeleteTable"))
              .build();
        }
      }
    }
    return getDeleteTableMethod;
  }

  private static volatile io.grpc.MethodDescriptor<hearts.v1.JoinTableRequest,
      hearts.v1.JoinTableResponse> getJoinTableMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "JoinTable",
      requestType = hearts.v1.JoinTableRequest.class,
      responseType = hearts.v1.JoinTableResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<hearts.v1.JoinTableRequest,
      hearts.v1.JoinTableResponse> getJoinTableMethod() {
    io.grpc.MethodDescriptor<hearts.v1.JoinTableRequest, hearts.v1.JoinTableResponse> getJoinTableMethod;
    if ((getJoinTableMethod = TableServiceGrpc.getJoinTableMethod) == null) {
      synchronized (TableServiceGrpc.class) {
        if ((getJoinTableMethod = TableServiceGrpc.getJoinTableMethod) == null) {
          TableServiceGrpc.getJoinTableMethod = getJoinTableMethod =
              io.grpc.MethodDescriptor.<hearts.v1.JoinTableRequest, hearts.v1.JoinTableResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "JoinTable"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.JoinTableRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.JoinTableResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TableServiceMethodDescriptorSupplier("JoinTable"))
              .build();
        }
      }
    }
    return getJoinTableMethod;
  }

  private static volatile io.grpc.MethodDescriptor<hearts.v1.LeaveTableRequest,
      hearts.v1.LeaveTableResponse> getLeaveTableMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "LeaveTable",
      requestType = hearts.v1.LeaveTableRequest.class,
      responseType = hearts.v1.LeaveTableResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<hearts.v1.LeaveTableRequest,
      hearts.v1.LeaveTableResponse> getLeaveTableMethod() {
    io.grpc.MethodDescriptor<hearts.v1.LeaveTableRequest, hearts.v1.LeaveTableResponse> getLeaveTableMethod;
    if ((getLeaveTableMethod = TableServiceGrpc.getLeaveTableMethod) == null) {
      synchronized (TableServiceGrpc.class) {
        if ((getLeaveTableMethod = TableServiceGrpc.getLeaveTableMethod) == null) {
          TableServiceGrpc.getLeaveTableMethod = getLeaveTableMethod =
              io.grpc.MethodDescriptor.<hearts.v1.LeaveTableRequest, hearts.v1.LeaveTableResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "LeaveTable"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.LeaveTableRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.LeaveTableResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TableServiceMethodDescriptorSupplier("LeaveTable"))
              .build();
        }
      }
    }
    return getLeaveTableMethod;
  }

  private static volatile io.grpc.MethodDescriptor<hearts.v1.PassCardsRequest,
      hearts.v1.PassCardsResponse> getPassCardsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "PassCards",
      requestType = hearts.v1.PassCardsRequest.class,
      responseType = hearts.v1.PassCardsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<hearts.v1.PassCardsRequest,
      hearts.v1.PassCardsResponse> getPassCardsMethod() {
    io.grpc.MethodDescriptor<hearts.v1.PassCardsRequest, hearts.v1.PassCardsResponse> getPassCardsMethod;
    if ((getPassCardsMethod = TableServiceGrpc.getPassCardsMethod) == null) {
      synchronized (TableServiceGrpc.class) {
        if ((getPassCardsMethod = TableServiceGrpc.getPassCardsMethod) == null) {
          TableServiceGrpc.getPassCardsMethod = getPassCardsMethod =
              io.grpc.MethodDescriptor.<hearts.v1.PassCardsRequest, hearts.v1.PassCardsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "PassCards"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.PassCardsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.PassCardsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TableServiceMethodDescriptorSupplier("PassCards"))
              .build();
        }
      }
    }
    return getPassCardsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<hearts.v1.PlayCardRequest,
      hearts.v1.PlayCardResponse> getPlayCardMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "PlayCard",
      requestType = hearts.v1.PlayCardRequest.class,
      responseType = hearts.v1.PlayCardResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<hearts.v1.PlayCardRequest,
      hearts.v1.PlayCardResponse> getPlayCardMethod() {
    io.grpc.MethodDescriptor<hearts.v1.PlayCardRequest, hearts.v1.PlayCardResponse> getPlayCardMethod;
    if ((getPlayCardMethod = TableServiceGrpc.getPlayCardMethod) == null) {
      synchronized (TableServiceGrpc.class) {
        if ((getPlayCardMethod = TableServiceGrpc.getPlayCardMethod) == null) {
          TableServiceGrpc.getPlayCardMethod = getPlayCardMethod =
              io.grpc.MethodDescriptor.<hearts.v1.PlayCardRequest, hearts.v1.PlayCardResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "PlayCard"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.PlayCardRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.PlayCardResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TableServiceMethodDescriptorSupplier("PlayCard"))
              .build();
        }
      }
    }
    return getPlayCardMethod;
  }

  private static volatile io.grpc.MethodDescriptor<hearts.v1.RematchTableRequest,
      hearts.v1.RematchTableResponse> getRematchTableMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "RematchTable",
      requestType = hearts.v1.RematchTableRequest.class,
      responseType = hearts.v1.RematchTableResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<hearts.v1.RematchTableRequest,
      hearts.v1.RematchTableResponse> getRematchTableMethod() {
    io.grpc.MethodDescriptor<hearts.v1.RematchTableRequest, hearts.v1.RematchTableResponse> getRematchTableMethod;
    if ((getRematchTableMethod = TableServiceGrpc.getRematchTableMethod) == null) {
      synchronized (TableServiceGrpc.class) {
        if ((getRematchTableMethod = TableServiceGrpc.getRematchTableMethod) == null) {
          TableServiceGrpc.getRematchTableMethod = getRematchTableMethod =
              io.grpc.MethodDescriptor.<hearts.v1.RematchTableRequest, hearts.v1.RematchTableResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "RematchTable"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.RematchTableRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.RematchTableResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TableServiceMethodDescriptorSupplier("RematchTable"))
              .build();
        }
      }
    }
    return getRematchTableMethod;
  }

  private static volatile io.grpc.MethodDescriptor<hearts.v1.SuggestMoveRequest,
      hearts.v1.SuggestMoveResponse> getSuggestMoveMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SuggestMove",
      requestType = hearts.v1.SuggestMoveRequest.class,
      responseType = hearts.v1.SuggestMoveResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<hearts.v1.SuggestMoveRequest,
      hearts.v1.SuggestMoveResponse> getSuggestMoveMethod() {
    io.grpc.MethodDescriptor<hearts.v1.SuggestMoveRequest, hearts.v1.SuggestMoveResponse> getSuggestMoveMethod;
    if ((getSuggestMoveMethod = TableServiceGrpc.getSuggestMoveMethod) == null) {
      synchronized (TableServiceGrpc.class) {
        if ((getSuggestMoveMethod = TableServiceGrpc.getSuggestMoveMethod) == null) {
          TableServiceGrpc.getSuggestMoveMethod = getSuggestMoveMethod =
              io.grpc.MethodDescriptor.<hearts.v1.SuggestMoveRequest, hearts.v1.SuggestMoveResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SuggestMove"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.SuggestMoveRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.SuggestMoveResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TableServiceMethodDescriptorSupplier("SuggestMove"))
              .build();
        }
      }
    }
    return getSuggestMoveMethod;
  }

  private static volatile io.grpc.MethodDescriptor<hearts.v1.SendReactionRequest,
      hearts.v1.SendReactionResponse> getSendReactionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SendReaction",
      requestType = hearts.v1.SendReactionRequest.class,
      responseType = hearts.v1.SendReactionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<hearts.v1.SendReactionRequest,
      hearts.v1.SendReactionResponse> getSendReactionMethod() {
    io.grpc.MethodDescriptor<hearts.v1.SendReactionRequest, hearts.v1.SendReactionResponse> getSendReactionMethod;
    if ((getSendReactionMethod = TableServiceGrpc.getSendReactionMethod) == null) {
      synchronized (TableServiceGrpc.class) {
        if ((getSendReactionMethod = TableServiceGrpc.getSendReactionMethod) == null) {
          TableServiceGrpc.getSendReactionMethod = getSendReactionMethod =
              io.grpc.MethodDescriptor.<hearts.v1.SendReactionRequest, hearts.v1.SendReactionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SendReaction"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.SendReactionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.SendReactionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TableServiceMethodDescriptorSupplier("SendReaction"))
              .build();
        }
      }
    }
    return getSendReactionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<hearts.v1.QuickJoinRequest,
      hearts.v1.QuickJoinResponse> getQuickJoinMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "QuickJoin",
      requestType = hearts.v1.QuickJoinRequest.class,
      responseType = hearts.v1.QuickJoinResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<hearts.v1.QuickJoinRequest,
      hearts.v1.QuickJoinResponse> getQuickJoinMethod() {
    io.grpc.MethodDescriptor<hearts.v1.QuickJoinRequest, hearts.v1.QuickJoinResponse> getQuickJoinMethod;
    if ((getQuickJoinMethod = TableServiceGrpc.getQuickJoinMethod) == null) {
      synchronized (TableServiceGrpc.class) {
        if ((getQuickJoinMethod = TableServiceGrpc.getQuickJoinMethod) == null) {
          TableServiceGrpc.getQuickJoinMethod = getQuickJoinMethod =
              io.grpc.MethodDescriptor.<hearts.v1.QuickJoinRequest, hearts.v1.QuickJoinResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "QuickJoin"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.QuickJoinRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.QuickJoinResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TableServiceMethodDescriptorSupplier("QuickJoin"))
              .build();
        }
      }
    }
    return getQuickJoinMethod;
  }

  private static volatile io.grpc.MethodDescriptor<hearts.v1.ListPlayerTablesRequest,
      hearts.v1.ListPlayerTablesResponse> getListPlayerTablesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListPlayerTables",
      requestType = hearts.v1.ListPlayerTablesRequest.class,
      responseType = hearts.v1.ListPlayerTablesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<hearts.v1.ListPlayerTablesRequest,
      hearts.v1.ListPlayerTablesResponse> getListPlayerTablesMethod() {
    io.grpc.MethodDescriptor<hearts.v1.ListPlayerTablesRequest, hearts.v1.ListPlayerTablesResponse> getListPlayerTablesMethod;
    if ((getListPlayerTablesMethod = TableServiceGrpc.getListPlayerTablesMethod) == null) {
      synchronized (TableServiceGrpc.class) {
        if ((getListPlayerTablesMethod = TableServiceGrpc.getListPlayerTablesMethod) == null) {
          TableServiceGrpc.getListPlayerTablesMethod = getListPlayerTablesMethod =
              io.grpc.MethodDescriptor.<hearts.v1.ListPlayerTablesRequest, hearts.v1.ListPlayerTablesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListPlayerTables"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.ListPlayerTablesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.ListPlayerTablesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TableServiceMethodDescriptorSupplier("ListPlayerTables"))
              .build();
        }
      }
    }
    return getListPlayerTablesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<hearts.v1.WatchTableRequest,
      hearts.v1.WatchTableResponse> getWatchTableMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "WatchTable",
      requestType = hearts.v1.WatchTableRequest.class,
      responseType = hearts.v1.WatchTableResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
  public static io.grpc.MethodDescriptor<hearts.v1.WatchTableRequest,
      hearts.v1.WatchTableResponse> getWatchTableMethod() {
    io.grpc.MethodDescriptor<hearts.v1.WatchTableRequest, hearts.v1.WatchTableResponse> getWatchTableMethod;
    if ((getWatchTableMethod = TableServiceGrpc.getWatchTableMethod) == null) {
      synchronized (TableServiceGrpc.class) {
        if ((getWatchTableMethod = TableServiceGrpc.getWatchTableMethod) == null) {
          TableServiceGrpc.getWatchTableMethod = getWatchTableMethod =
              io.grpc.MethodDescriptor.<hearts.v1.WatchTableRequest, hearts.v1.WatchTableResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "WatchTable"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.WatchTableRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  hearts.v1.WatchTableResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TableServiceMethodDescriptorSupplier("WatchTable"))
              .build();
        }
      }
    }
    return getWatchTableMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static TableServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<TableServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<TableServiceStub>() {
        @java.lang.Override
        public TableServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new TableServiceStub(channel, callOptions);
        }
      };
    return TableServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static TableServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<TableServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<TableServiceBlockingV2Stub>() {
        @java.lang.Override
        public TableServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new TableServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return TableServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static TableServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<TableServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<TableServiceBlockingStub>() {
        @java.lang.Override
        public TableServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new TableServiceBlockingStub(channel, callOptions);
        }
      };
    return TableServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static TableServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<TableServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<TableServiceFutureStub>() {
        @java.lang.Override
        public TableServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new TableServiceFutureStub(channel, callOptions);
        }
      };
    return TableServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * TableService hosts Hearts tables and the games played at them.
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * GetTable returns a table as the caller may see it.
     * </pre>
     */
    default void getTable(hearts.v1.GetTableRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.GetTableResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetTableMethod(), responseObserver);
    }

    /**
     * <pre>
     * ListTables lists tables, newest first, one page at a time (AIP-158);
     * unlisted tables are never in it.
     * </pre>
     */
    default void listTables(hearts.v1.ListTablesRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.ListTablesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListTablesMethod(), responseObserver);
    }

    /**
     * <pre>
     * CreateTable creates a table with its rules and bot seats, and returns the
     * creator token that alone may delete it.
     * </pre>
     */
    default void createTable(hearts.v1.CreateTableRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.CreateTableResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCreateTableMethod(), responseObserver);
    }

    /**
     * <pre>
     * DeleteTable deletes a table; only the caller holding its creator token
     * may delete it.
     * </pre>
     */
    default void deleteTable(hearts.v1.DeleteTableRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.DeleteTableResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteTableMethod(), responseObserver);
    }

    /**
     * <pre>
     * JoinTable seats the caller at a given or any empty seat and returns the
     * seat token for later moves. A seat given by number may also be one whose
     * bot stands in for a player who left mid-game (Seat.stand_in): the caller
     * takes over from the bot. Called with one of the table's seat tokens as
     * authorization (expired or not), it renews that token instead: a new token
     * for the same seat while the seat is still the caller's, and nothing else
     * changes.
     * </pre>
     */
    default void joinTable(hearts.v1.JoinTableRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.JoinTableResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getJoinTableMethod(), responseObserver);
    }

    /**
     * <pre>
     * LeaveTable gives up the caller's seat; the seat token stops working.
     * </pre>
     */
    default void leaveTable(hearts.v1.LeaveTableRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.LeaveTableResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getLeaveTableMethod(), responseObserver);
    }

    /**
     * <pre>
     * PassCards chooses the three cards the caller's seat passes this round.
     * </pre>
     */
    default void passCards(hearts.v1.PassCardsRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.PassCardsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getPassCardsMethod(), responseObserver);
    }

    /**
     * <pre>
     * PlayCard plays one card from the caller's hand to the current trick.
     * </pre>
     */
    default void playCard(hearts.v1.PlayCardRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.PlayCardResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getPlayCardMethod(), responseObserver);
    }

    /**
     * <pre>
     * RematchTable starts the next game with the same players: called at a
     * finished game with one of its seat tokens, it seats the caller at the
     * same seat of a new table with the finished table's settings (display
     * name, rules, bot seats, turn timeout, wait for bots, listing, turn
     * notifications) and returns that seat's
     * token. The first call creates the new table, names it in the finished
     * table's Table.rematch_table and tells the finished table's watchers with
     * a RematchCreatedEvent; each later call by another of its players seats
     * that player too. The new game starts when all four seats are taken, by
     * the old players or by anyone who joins. Called again by a player already
     * seated there, it returns a new token for that seat.
     * </pre>
     */
    default void rematchTable(hearts.v1.RematchTableRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.RematchTableResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRematchTableMethod(), responseObserver);
    }

    /**
     * <pre>
     * SuggestMove answers what the server would play in the caller's seat now:
     * the card to play, or the three cards to pass, as a heuristic bot would
     * choose them from the caller's view only (the move a turn timer makes).
     * It changes nothing. For a hint button, or a client's auto-play, in any
     * language. Needs the seat token of a seat that owes a move.
     * </pre>
     */
    default void suggestMove(hearts.v1.SuggestMoveRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.SuggestMoveResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSuggestMoveMethod(), responseObserver);
    }

    /**
     * <pre>
     * SendReaction shows the caller's reaction (an emoji of a fixed set) to
     * everyone watching the table, as a ReactionEvent on their streams. It
     * changes nothing at the table (not its etag) and is not stored. Needs a
     * seat token; a seat may send a few per 10 seconds (RESOURCE_EXHAUSTED /
     * TOO_MANY_REACTIONS beyond).
     * </pre>
     */
    default void sendReaction(hearts.v1.SendReactionRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.SendReactionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSendReactionMethod(), responseObserver);
    }

    /**
     * <pre>
     * QuickJoin seats the caller at a game that waits for players and has the
     * rules and timeouts asked for, or makes one: the "play now" button of a
     * lobby. Callers who ask for the same rules and timeouts are seated
     * together, four to a table, whichever replica they reach; the game starts
     * when the fourth has joined, or when fill_with_bots_after (if asked for)
     * runs out and bots take the empty seats. The table it makes is listed,
     * named "Quick game", and has no bots until then; JoinTable, LeaveTable and
     * WatchTable work on it as on any table. A table made here counts against
     * the caller's quota of new tables, as CreateTable does. Send a request_id:
     * a retry then gets the same seat instead of a second one.
     * </pre>
     */
    default void quickJoin(hearts.v1.QuickJoinRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.QuickJoinResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getQuickJoinMethod(), responseObserver);
    }

    /**
     * <pre>
     * ListPlayerTables lists the tables where a signed-in player holds a seat,
     * listed or unlisted, the most recently joined first: the "my games" screen,
     * and how an app finds its player's games again on a new device or after a
     * reinstall (JoinTable with the identity token then returns a new seat
     * token for the seat). Finished games stay in it until the player leaves
     * them or they expire. It needs a server that verifies identity tokens.
     * </pre>
     */
    default void listPlayerTables(hearts.v1.ListPlayerTablesRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.ListPlayerTablesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListPlayerTablesMethod(), responseObserver);
    }

    /**
     * <pre>
     * WatchTable streams the caller's view of a table and then every event the
     * caller may see, until the table is deleted or the caller hangs up.
     * </pre>
     */
    default void watchTable(hearts.v1.WatchTableRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.WatchTableResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getWatchTableMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service TableService.
   * <pre>
   * TableService hosts Hearts tables and the games played at them.
   * </pre>
   */
  public static abstract class TableServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return TableServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service TableService.
   * <pre>
   * TableService hosts Hearts tables and the games played at them.
   * </pre>
   */
  public static final class TableServiceStub
      extends io.grpc.stub.AbstractAsyncStub<TableServiceStub> {
    private TableServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected TableServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new TableServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * GetTable returns a table as the caller may see it.
     * </pre>
     */
    public void getTable(hearts.v1.GetTableRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.GetTableResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetTableMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * ListTables lists tables, newest first, one page at a time (AIP-158);
     * unlisted tables are never in it.
     * </pre>
     */
    public void listTables(hearts.v1.ListTablesRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.ListTablesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListTablesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * CreateTable creates a table with its rules and bot seats, and returns the
     * creator token that alone may delete it.
     * </pre>
     */
    public void createTable(hearts.v1.CreateTableRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.CreateTableResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCreateTableMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * DeleteTable deletes a table; only the caller holding its creator token
     * may delete it.
     * </pre>
     */
    public void deleteTable(hearts.v1.DeleteTableRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.DeleteTableResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteTableMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * JoinTable seats the caller at a given or any empty seat and returns the
     * seat token for later moves. A seat given by number may also be one whose
     * bot stands in for a player who left mid-game (Seat.stand_in): the caller
     * takes over from the bot. Called with one of the table's seat tokens as
     * authorization (expired or not), it renews that token instead: a new token
     * for the same seat while the seat is still the caller's, and nothing else
     * changes.
     * </pre>
     */
    public void joinTable(hearts.v1.JoinTableRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.JoinTableResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getJoinTableMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * LeaveTable gives up the caller's seat; the seat token stops working.
     * </pre>
     */
    public void leaveTable(hearts.v1.LeaveTableRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.LeaveTableResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getLeaveTableMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * PassCards chooses the three cards the caller's seat passes this round.
     * </pre>
     */
    public void passCards(hearts.v1.PassCardsRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.PassCardsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getPassCardsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * PlayCard plays one card from the caller's hand to the current trick.
     * </pre>
     */
    public void playCard(hearts.v1.PlayCardRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.PlayCardResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getPlayCardMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * RematchTable starts the next game with the same players: called at a
     * finished game with one of its seat tokens, it seats the caller at the
     * same seat of a new table with the finished table's settings (display
     * name, rules, bot seats, turn timeout, wait for bots, listing, turn
     * notifications) and returns that seat's
     * token. The first call creates the new table, names it in the finished
     * table's Table.rematch_table and tells the finished table's watchers with
     * a RematchCreatedEvent; each later call by another of its players seats
     * that player too. The new game starts when all four seats are taken, by
     * the old players or by anyone who joins. Called again by a player already
     * seated there, it returns a new token for that seat.
     * </pre>
     */
    public void rematchTable(hearts.v1.RematchTableRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.RematchTableResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRematchTableMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * SuggestMove answers what the server would play in the caller's seat now:
     * the card to play, or the three cards to pass, as a heuristic bot would
     * choose them from the caller's view only (the move a turn timer makes).
     * It changes nothing. For a hint button, or a client's auto-play, in any
     * language. Needs the seat token of a seat that owes a move.
     * </pre>
     */
    public void suggestMove(hearts.v1.SuggestMoveRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.SuggestMoveResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSuggestMoveMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * SendReaction shows the caller's reaction (an emoji of a fixed set) to
     * everyone watching the table, as a ReactionEvent on their streams. It
     * changes nothing at the table (not its etag) and is not stored. Needs a
     * seat token; a seat may send a few per 10 seconds (RESOURCE_EXHAUSTED /
     * TOO_MANY_REACTIONS beyond).
     * </pre>
     */
    public void sendReaction(hearts.v1.SendReactionRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.SendReactionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSendReactionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * QuickJoin seats the caller at a game that waits for players and has the
     * rules and timeouts asked for, or makes one: the "play now" button of a
     * lobby. Callers who ask for the same rules and timeouts are seated
     * together, four to a table, whichever replica they reach; the game starts
     * when the fourth has joined, or when fill_with_bots_after (if asked for)
     * runs out and bots take the empty seats. The table it makes is listed,
     * named "Quick game", and has no bots until then; JoinTable, LeaveTable and
     * WatchTable work on it as on any table. A table made here counts against
     * the caller's quota of new tables, as CreateTable does. Send a request_id:
     * a retry then gets the same seat instead of a second one.
     * </pre>
     */
    public void quickJoin(hearts.v1.QuickJoinRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.QuickJoinResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getQuickJoinMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * ListPlayerTables lists the tables where a signed-in player holds a seat,
     * listed or unlisted, the most recently joined first: the "my games" screen,
     * and how an app finds its player's games again on a new device or after a
     * reinstall (JoinTable with the identity token then returns a new seat
     * token for the seat). Finished games stay in it until the player leaves
     * them or they expire. It needs a server that verifies identity tokens.
     * </pre>
     */
    public void listPlayerTables(hearts.v1.ListPlayerTablesRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.ListPlayerTablesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListPlayerTablesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * WatchTable streams the caller's view of a table and then every event the
     * caller may see, until the table is deleted or the caller hangs up.
     * </pre>
     */
    public void watchTable(hearts.v1.WatchTableRequest request,
        io.grpc.stub.StreamObserver<hearts.v1.WatchTableResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncServerStreamingCall(
          getChannel().newCall(getWatchTableMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service TableService.
   * <pre>
   * TableService hosts Hearts tables and the games played at them.
   * </pre>
   */
  public static final class TableServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<TableServiceBlockingV2Stub> {
    private TableServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected TableServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new TableServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * GetTable returns a table as the caller may see it.
     * </pre>
     */
    public hearts.v1.GetTableResponse getTable(hearts.v1.GetTableRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetTableMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ListTables lists tables, newest first, one page at a time (AIP-158);
     * unlisted tables are never in it.
     * </pre>
     */
    public hearts.v1.ListTablesResponse listTables(hearts.v1.ListTablesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListTablesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * CreateTable creates a table with its rules and bot seats, and returns the
     * creator token that alone may delete it.
     * </pre>
     */
    public hearts.v1.CreateTableResponse createTable(hearts.v1.CreateTableRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getCreateTableMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * DeleteTable deletes a table; only the caller holding its creator token
     * may delete it.
     * </pre>
     */
    public hearts.v1.DeleteTableResponse deleteTable(hearts.v1.DeleteTableRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeleteTableMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * JoinTable seats the caller at a given or any empty seat and returns the
     * seat token for later moves. A seat given by number may also be one whose
     * bot stands in for a player who left mid-game (Seat.stand_in): the caller
     * takes over from the bot. Called with one of the table's seat tokens as
     * authorization (expired or not), it renews that token instead: a new token
     * for the same seat while the seat is still the caller's, and nothing else
     * changes.
     * </pre>
     */
    public hearts.v1.JoinTableResponse joinTable(hearts.v1.JoinTableRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getJoinTableMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * LeaveTable gives up the caller's seat; the seat token stops working.
     * </pre>
     */
    public hearts.v1.LeaveTableResponse leaveTable(hearts.v1.LeaveTableRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getLeaveTableMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * PassCards chooses the three cards the caller's seat passes this round.
     * </pre>
     */
    public hearts.v1.PassCardsResponse passCards(hearts.v1.PassCardsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getPassCardsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * PlayCard plays one card from the caller's hand to the current trick.
     * </pre>
     */
    public hearts.v1.PlayCardResponse playCard(hearts.v1.PlayCardRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getPlayCardMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * RematchTable starts the next game with the same players: called at a
     * finished game with one of its seat tokens, it seats the caller at the
     * same seat of a new table with the finished table's settings (display
     * name, rules, bot seats, turn timeout, wait for bots, listing, turn
     * notifications) and returns that seat's
     * token. The first call creates the new table, names it in the finished
     * table's Table.rematch_table and tells the finished table's watchers with
     * a RematchCreatedEvent; each later call by another of its players seats
     * that player too. The new game starts when all four seats are taken, by
     * the old players or by anyone who joins. Called again by a player already
     * seated there, it returns a new token for that seat.
     * </pre>
     */
    public hearts.v1.RematchTableResponse rematchTable(hearts.v1.RematchTableRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getRematchTableMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * SuggestMove answers what the server would play in the caller's seat now:
     * the card to play, or the three cards to pass, as a heuristic bot would
     * choose them from the caller's view only (the move a turn timer makes).
     * It changes nothing. For a hint button, or a client's auto-play, in any
     * language. Needs the seat token of a seat that owes a move.
     * </pre>
     */
    public hearts.v1.SuggestMoveResponse suggestMove(hearts.v1.SuggestMoveRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSuggestMoveMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * SendReaction shows the caller's reaction (an emoji of a fixed set) to
     * everyone watching the table, as a ReactionEvent on their streams. It
     * changes nothing at the table (not its etag) and is not stored. Needs a
     * seat token; a seat may send a few per 10 seconds (RESOURCE_EXHAUSTED /
     * TOO_MANY_REACTIONS beyond).
     * </pre>
     */
    public hearts.v1.SendReactionResponse sendReaction(hearts.v1.SendReactionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSendReactionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * QuickJoin seats the caller at a game that waits for players and has the
     * rules and timeouts asked for, or makes one: the "play now" button of a
     * lobby. Callers who ask for the same rules and timeouts are seated
     * together, four to a table, whichever replica they reach; the game starts
     * when the fourth has joined, or when fill_with_bots_after (if asked for)
     * runs out and bots take the empty seats. The table it makes is listed,
     * named "Quick game", and has no bots until then; JoinTable, LeaveTable and
     * WatchTable work on it as on any table. A table made here counts against
     * the caller's quota of new tables, as CreateTable does. Send a request_id:
     * a retry then gets the same seat instead of a second one.
     * </pre>
     */
    public hearts.v1.QuickJoinResponse quickJoin(hearts.v1.QuickJoinRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getQuickJoinMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ListPlayerTables lists the tables where a signed-in player holds a seat,
     * listed or unlisted, the most recently joined first: the "my games" screen,
     * and how an app finds its player's games again on a new device or after a
     * reinstall (JoinTable with the identity token then returns a new seat
     * token for the seat). Finished games stay in it until the player leaves
     * them or they expire. It needs a server that verifies identity tokens.
     * </pre>
     */
    public hearts.v1.ListPlayerTablesResponse listPlayerTables(hearts.v1.ListPlayerTablesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListPlayerTablesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * WatchTable streams the caller's view of a table and then every event the
     * caller may see, until the table is deleted or the caller hangs up.
     * </pre>
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<?, hearts.v1.WatchTableResponse>
        watchTable(hearts.v1.WatchTableRequest request) {
      return io.grpc.stub.ClientCalls.blockingV2ServerStreamingCall(
          getChannel(), getWatchTableMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service TableService.
   * <pre>
   * TableService hosts Hearts tables and the games played at them.
   * </pre>
   */
  public static final class TableServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<TableServiceBlockingStub> {
    private TableServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected TableServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new TableServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * GetTable returns a table as the caller may see it.
     * </pre>
     */
    public hearts.v1.GetTableResponse getTable(hearts.v1.GetTableRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetTableMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ListTables lists tables, newest first, one page at a time (AIP-158);
     * unlisted tables are never in it.
     * </pre>
     */
    public hearts.v1.ListTablesResponse listTables(hearts.v1.ListTablesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListTablesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * CreateTable creates a table with its rules and bot seats, and returns the
     * creator token that alone may delete it.
     * </pre>
     */
    public hearts.v1.CreateTableResponse createTable(hearts.v1.CreateTableRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCreateTableMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * DeleteTable deletes a table; only the caller holding its creator token
     * may delete it.
     * </pre>
     */
    public hearts.v1.DeleteTableResponse deleteTable(hearts.v1.DeleteTableRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteTableMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * JoinTable seats the caller at a given or any empty seat and returns the
     * seat token for later moves. A seat given by number may also be one whose
     * bot stands in for a player who left mid-game (Seat.stand_in): the caller
     * takes over from the bot. Called with one of the table's seat tokens as
     * authorization (expired or not), it renews that token instead: a new token
     * for the same seat while the seat is still the caller's, and nothing else
     * changes.
     * </pre>
     */
    public hearts.v1.JoinTableResponse joinTable(hearts.v1.JoinTableRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getJoinTableMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * LeaveTable gives up the caller's seat; the seat token stops working.
     * </pre>
     */
    public hearts.v1.LeaveTableResponse leaveTable(hearts.v1.LeaveTableRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getLeaveTableMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * PassCards chooses the three cards the caller's seat passes this round.
     * </pre>
     */
    public hearts.v1.PassCardsResponse passCards(hearts.v1.PassCardsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getPassCardsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * PlayCard plays one card from the caller's hand to the current trick.
     * </pre>
     */
    public hearts.v1.PlayCardResponse playCard(hearts.v1.PlayCardRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getPlayCardMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * RematchTable starts the next game with the same players: called at a
     * finished game with one of its seat tokens, it seats the caller at the
     * same seat of a new table with the finished table's settings (display
     * name, rules, bot seats, turn timeout, wait for bots, listing, turn
     * notifications) and returns that seat's
     * token. The first call creates the new table, names it in the finished
     * table's Table.rematch_table and tells the finished table's watchers with
     * a RematchCreatedEvent; each later call by another of its players seats
     * that player too. The new game starts when all four seats are taken, by
     * the old players or by anyone who joins. Called again by a player already
     * seated there, it returns a new token for that seat.
     * </pre>
     */
    public hearts.v1.RematchTableResponse rematchTable(hearts.v1.RematchTableRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRematchTableMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * SuggestMove answers what the server would play in the caller's seat now:
     * the card to play, or the three cards to pass, as a heuristic bot would
     * choose them from the caller's view only (the move a turn timer makes).
     * It changes nothing. For a hint button, or a client's auto-play, in any
     * language. Needs the seat token of a seat that owes a move.
     * </pre>
     */
    public hearts.v1.SuggestMoveResponse suggestMove(hearts.v1.SuggestMoveRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSuggestMoveMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * SendReaction shows the caller's reaction (an emoji of a fixed set) to
     * everyone watching the table, as a ReactionEvent on their streams. It
     * changes nothing at the table (not its etag) and is not stored. Needs a
     * seat token; a seat may send a few per 10 seconds (RESOURCE_EXHAUSTED /
     * TOO_MANY_REACTIONS beyond).
     * </pre>
     */
    public hearts.v1.SendReactionResponse sendReaction(hearts.v1.SendReactionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSendReactionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * QuickJoin seats the caller at a game that waits for players and has the
     * rules and timeouts asked for, or makes one: the "play now" button of a
     * lobby. Callers who ask for the same rules and timeouts are seated
     * together, four to a table, whichever replica they reach; the game starts
     * when the fourth has joined, or when fill_with_bots_after (if asked for)
     * runs out and bots take the empty seats. The table it makes is listed,
     * named "Quick game", and has no bots until then; JoinTable, LeaveTable and
     * WatchTable work on it as on any table. A table made here counts against
     * the caller's quota of new tables, as CreateTable does. Send a request_id:
     * a retry then gets the same seat instead of a second one.
     * </pre>
     */
    public hearts.v1.QuickJoinResponse quickJoin(hearts.v1.QuickJoinRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getQuickJoinMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ListPlayerTables lists the tables where a signed-in player holds a seat,
     * listed or unlisted, the most recently joined first: the "my games" screen,
     * and how an app finds its player's games again on a new device or after a
     * reinstall (JoinTable with the identity token then returns a new seat
     * token for the seat). Finished games stay in it until the player leaves
     * them or they expire. It needs a server that verifies identity tokens.
     * </pre>
     */
    public hearts.v1.ListPlayerTablesResponse listPlayerTables(hearts.v1.ListPlayerTablesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListPlayerTablesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * WatchTable streams the caller's view of a table and then every event the
     * caller may see, until the table is deleted or the caller hangs up.
     * </pre>
     */
    public java.util.Iterator<hearts.v1.WatchTableResponse> watchTable(
        hearts.v1.WatchTableRequest request) {
      return io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          getChannel(), getWatchTableMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service TableService.
   * <pre>
   * TableService hosts Hearts tables and the games played at them.
   * </pre>
   */
  public static final class TableServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<TableServiceFutureStub> {
    private TableServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected TableServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new TableServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * GetTable returns a table as the caller may see it.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<hearts.v1.GetTableResponse> getTable(
        hearts.v1.GetTableRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetTableMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ListTables lists tables, newest first, one page at a time (AIP-158);
     * unlisted tables are never in it.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<hearts.v1.ListTablesResponse> listTables(
        hearts.v1.ListTablesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListTablesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * CreateTable creates a table with its rules and bot seats, and returns the
     * creator token that alone may delete it.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<hearts.v1.CreateTableResponse> createTable(
        hearts.v1.CreateTableRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCreateTableMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * DeleteTable deletes a table; only the caller holding its creator token
     * may delete it.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<hearts.v1.DeleteTableResponse> deleteTable(
        hearts.v1.DeleteTableRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteTableMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * JoinTable seats the caller at a given or any empty seat and returns the
     * seat token for later moves. A seat given by number may also be one whose
     * bot stands in for a player who left mid-game (Seat.stand_in): the caller
     * takes over from the bot. Called with one of the table's seat tokens as
     * authorization (expired or not), it renews that token instead: a new token
     * for the same seat while the seat is still the caller's, and nothing else
     * changes.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<hearts.v1.JoinTableResponse> joinTable(
        hearts.v1.JoinTableRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getJoinTableMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * LeaveTable gives up the caller's seat; the seat token stops working.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<hearts.v1.LeaveTableResponse> leaveTable(
        hearts.v1.LeaveTableRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getLeaveTableMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * PassCards chooses the three cards the caller's seat passes this round.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<hearts.v1.PassCardsResponse> passCards(
        hearts.v1.PassCardsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getPassCardsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * PlayCard plays one card from the caller's hand to the current trick.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<hearts.v1.PlayCardResponse> playCard(
        hearts.v1.PlayCardRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getPlayCardMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * RematchTable starts the next game with the same players: called at a
     * finished game with one of its seat tokens, it seats the caller at the
     * same seat of a new table with the finished table's settings (display
     * name, rules, bot seats, turn timeout, wait for bots, listing, turn
     * notifications) and returns that seat's
     * token. The first call creates the new table, names it in the finished
     * table's Table.rematch_table and tells the finished table's watchers with
     * a RematchCreatedEvent; each later call by another of its players seats
     * that player too. The new game starts when all four seats are taken, by
     * the old players or by anyone who joins. Called again by a player already
     * seated there, it returns a new token for that seat.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<hearts.v1.RematchTableResponse> rematchTable(
        hearts.v1.RematchTableRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRematchTableMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * SuggestMove answers what the server would play in the caller's seat now:
     * the card to play, or the three cards to pass, as a heuristic bot would
     * choose them from the caller's view only (the move a turn timer makes).
     * It changes nothing. For a hint button, or a client's auto-play, in any
     * language. Needs the seat token of a seat that owes a move.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<hearts.v1.SuggestMoveResponse> suggestMove(
        hearts.v1.SuggestMoveRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSuggestMoveMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * SendReaction shows the caller's reaction (an emoji of a fixed set) to
     * everyone watching the table, as a ReactionEvent on their streams. It
     * changes nothing at the table (not its etag) and is not stored. Needs a
     * seat token; a seat may send a few per 10 seconds (RESOURCE_EXHAUSTED /
     * TOO_MANY_REACTIONS beyond).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<hearts.v1.SendReactionResponse> sendReaction(
        hearts.v1.SendReactionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSendReactionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * QuickJoin seats the caller at a game that waits for players and has the
     * rules and timeouts asked for, or makes one: the "play now" button of a
     * lobby. Callers who ask for the same rules and timeouts are seated
     * together, four to a table, whichever replica they reach; the game starts
     * when the fourth has joined, or when fill_with_bots_after (if asked for)
     * runs out and bots take the empty seats. The table it makes is listed,
     * named "Quick game", and has no bots until then; JoinTable, LeaveTable and
     * WatchTable work on it as on any table. A table made here counts against
     * the caller's quota of new tables, as CreateTable does. Send a request_id:
     * a retry then gets the same seat instead of a second one.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<hearts.v1.QuickJoinResponse> quickJoin(
        hearts.v1.QuickJoinRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getQuickJoinMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ListPlayerTables lists the tables where a signed-in player holds a seat,
     * listed or unlisted, the most recently joined first: the "my games" screen,
     * and how an app finds its player's games again on a new device or after a
     * reinstall (JoinTable with the identity token then returns a new seat
     * token for the seat). Finished games stay in it until the player leaves
     * them or they expire. It needs a server that verifies identity tokens.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<hearts.v1.ListPlayerTablesResponse> listPlayerTables(
        hearts.v1.ListPlayerTablesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListPlayerTablesMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_GET_TABLE = 0;
  private static final int METHODID_LIST_TABLES = 1;
  private static final int METHODID_CREATE_TABLE = 2;
  private static final int METHODID_DELETE_TABLE = 3;
  private static final int METHODID_JOIN_TABLE = 4;
  private static final int METHODID_LEAVE_TABLE = 5;
  private static final int METHODID_PASS_CARDS = 6;
  private static final int METHODID_PLAY_CARD = 7;
  private static final int METHODID_REMATCH_TABLE = 8;
  private static final int METHODID_SUGGEST_MOVE = 9;
  private static final int METHODID_SEND_REACTION = 10;
  private static final int METHODID_QUICK_JOIN = 11;
  private static final int METHODID_LIST_PLAYER_TABLES = 12;
  private static final int METHODID_WATCH_TABLE = 13;

  private static final class MethodHandlers<Req, Resp> implements
      io.grpc.stub.ServerCalls.UnaryMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ServerStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ClientStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.BidiStreamingMethod<Req, Resp> {
    private final AsyncService serviceImpl;
    private final int methodId;

    MethodHandlers(AsyncService serviceImpl, int methodId) {
      this.serviceImpl = serviceImpl;
      this.methodId = methodId;
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public void invoke(Req request, io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        case METHODID_GET_TABLE:
          serviceImpl.getTable((hearts.v1.GetTableRequest) request,
              (io.grpc.stub.StreamObserver<hearts.v1.GetTableResponse>) responseObserver);
          break;
        case METHODID_LIST_TABLES:
          serviceImpl.listTables((hearts.v1.ListTablesRequest) request,
              (io.grpc.stub.StreamObserver<hearts.v1.ListTablesResponse>) responseObserver);
          break;
        case METHODID_CREATE_TABLE:
          serviceImpl.createTable((hearts.v1.CreateTableRequest) request,
              (io.grpc.stub.StreamObserver<hearts.v1.CreateTableResponse>) responseObserver);
          break;
        case METHODID_DELETE_TABLE:
          serviceImpl.deleteTable((hearts.v1.DeleteTableRequest) request,
              (io.grpc.stub.StreamObserver<hearts.v1.DeleteTableResponse>) responseObserver);
          break;
        case METHODID_JOIN_TABLE:
          serviceImpl.joinTable((hearts.v1.JoinTableRequest) request,
              (io.grpc.stub.StreamObserver<hearts.v1.JoinTableResponse>) responseObserver);
          break;
        case METHODID_LEAVE_TABLE:
          serviceImpl.leaveTable((hearts.v1.LeaveTableRequest) request,
              (io.grpc.stub.StreamObserver<hearts.v1.LeaveTableResponse>) responseObserver);
          break;
        case METHODID_PASS_CARDS:
          serviceImpl.passCards((hearts.v1.PassCardsRequest) request,
              (io.grpc.stub.StreamObserver<hearts.v1.PassCardsResponse>) responseObserver);
          break;
        case METHODID_PLAY_CARD:
          serviceImpl.playCard((hearts.v1.PlayCardRequest) request,
              (io.grpc.stub.StreamObserver<hearts.v1.PlayCardResponse>) responseObserver);
          break;
        case METHODID_REMATCH_TABLE:
          serviceImpl.rematchTable((hearts.v1.RematchTableRequest) request,
              (io.grpc.stub.StreamObserver<hearts.v1.RematchTableResponse>) responseObserver);
          break;
        case METHODID_SUGGEST_MOVE:
          serviceImpl.suggestMove((hearts.v1.SuggestMoveRequest) request,
              (io.grpc.stub.StreamObserver<hearts.v1.SuggestMoveResponse>) responseObserver);
          break;
        case METHODID_SEND_REACTION:
          serviceImpl.sendReaction((hearts.v1.SendReactionRequest) request,
              (io.grpc.stub.StreamObserver<hearts.v1.SendReactionResponse>) responseObserver);
          break;
        case METHODID_QUICK_JOIN:
          serviceImpl.quickJoin((hearts.v1.QuickJoinRequest) request,
              (io.grpc.stub.StreamObserver<hearts.v1.QuickJoinResponse>) responseObserver);
          break;
        case METHODID_LIST_PLAYER_TABLES:
          serviceImpl.listPlayerTables((hearts.v1.ListPlayerTablesRequest) request,
              (io.grpc.stub.StreamObserver<hearts.v1.ListPlayerTablesResponse>) responseObserver);
          break;
        case METHODID_WATCH_TABLE:
          serviceImpl.watchTable((hearts.v1.WatchTableRequest) request,
              (io.grpc.stub.StreamObserver<hearts.v1.WatchTableResponse>) responseObserver);
          break;
        default:
          throw new AssertionError();
      }
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public io.grpc.stub.StreamObserver<Req> invoke(
        io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        default:
          throw new AssertionError();
      }
    }
  }

  public static final io.grpc.ServerServiceDefinition bindService(AsyncService service) {
    return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
        .addMethod(
          getGetTableMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              hearts.v1.GetTableRequest,
              hearts.v1.GetTableResponse>(
                service, METHODID_GET_TABLE)))
        .addMethod(
          getListTablesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              hearts.v1.ListTablesRequest,
              hearts.v1.ListTablesResponse>(
                service, METHODID_LIST_TABLES)))
        .addMethod(
          getCreateTableMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              hearts.v1.CreateTableRequest,
              hearts.v1.CreateTableResponse>(
                service, METHODID_CREATE_TABLE)))
        .addMethod(
          getDeleteTableMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              hearts.v1.DeleteTableRequest,
              hearts.v1.DeleteTableResponse>(
                service, METHODID_DELETE_TABLE)))
        .addMethod(
          getJoinTableMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              hearts.v1.JoinTableRequest,
              hearts.v1.JoinTableResponse>(
                service, METHODID_JOIN_TABLE)))
        .addMethod(
          getLeaveTableMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              hearts.v1.LeaveTableRequest,
              hearts.v1.LeaveTableResponse>(
                service, METHODID_LEAVE_TABLE)))
        .addMethod(
          getPassCardsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              hearts.v1.PassCardsRequest,
              hearts.v1.PassCardsResponse>(
                service, METHODID_PASS_CARDS)))
        .addMethod(
          getPlayCardMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              hearts.v1.PlayCardRequest,
              hearts.v1.PlayCardResponse>(
                service, METHODID_PLAY_CARD)))
        .addMethod(
          getRematchTableMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              hearts.v1.RematchTableRequest,
              hearts.v1.RematchTableResponse>(
                service, METHODID_REMATCH_TABLE)))
        .addMethod(
          getSuggestMoveMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              hearts.v1.SuggestMoveRequest,
              hearts.v1.SuggestMoveResponse>(
                service, METHODID_SUGGEST_MOVE)))
        .addMethod(
          getSendReactionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              hearts.v1.SendReactionRequest,
              hearts.v1.SendReactionResponse>(
                service, METHODID_SEND_REACTION)))
        .addMethod(
          getQuickJoinMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              hearts.v1.QuickJoinRequest,
              hearts.v1.QuickJoinResponse>(
                service, METHODID_QUICK_JOIN)))
        .addMethod(
          getListPlayerTablesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              hearts.v1.ListPlayerTablesRequest,
              hearts.v1.ListPlayerTablesResponse>(
                service, METHODID_LIST_PLAYER_TABLES)))
        .addMethod(
          getWatchTableMethod(),
          io.grpc.stub.ServerCalls.asyncServerStreamingCall(
            new MethodHandlers<
              hearts.v1.WatchTableRequest,
              hearts.v1.WatchTableResponse>(
                service, METHODID_WATCH_TABLE)))
        .build();
  }

  private static abstract class TableServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    TableServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return hearts.v1.TableServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("TableService");
    }
  }

  private static final class TableServiceFileDescriptorSupplier
      extends TableServiceBaseDescriptorSupplier {
    TableServiceFileDescriptorSupplier() {}
  }

  private static final class TableServiceMethodDescriptorSupplier
      extends TableServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    TableServiceMethodDescriptorSupplier(java.lang.String methodName) {
      this.methodName = methodName;
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.MethodDescriptor getMethodDescriptor() {
      return getServiceDescriptor().findMethodByName(methodName);
    }
  }

  private static volatile io.grpc.ServiceDescriptor serviceDescriptor;

  public static io.grpc.ServiceDescriptor getServiceDescriptor() {
    io.grpc.ServiceDescriptor result = serviceDescriptor;
    if (result == null) {
      synchronized (TableServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new TableServiceFileDescriptorSupplier())
              .addMethod(getGetTableMethod())
              .addMethod(getListTablesMethod())
              .addMethod(getCreateTableMethod())
              .addMethod(getDeleteTableMethod())
              .addMethod(getJoinTableMethod())
              .addMethod(getLeaveTableMethod())
              .addMethod(getPassCardsMethod())
              .addMethod(getPlayCardMethod())
              .addMethod(getRematchTableMethod())
              .addMethod(getSuggestMoveMethod())
              .addMethod(getSendReactionMethod())
              .addMethod(getQuickJoinMethod())
              .addMethod(getListPlayerTablesMethod())
              .addMethod(getWatchTableMethod())
              .build();
        }
      }
    }
    return result;
  }
}
