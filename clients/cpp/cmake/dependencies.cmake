# The libraries the SDK links against, found the same way by the SDK's build and by a bot built
# on it elsewhere (bisca-config.cmake in the build folder includes this file).
# gRPC's own CMake package (Debian's libgrpc-dev ships it) takes a second to load.  Where it is
# missing, pkg-config's grpc++ does the same job, but slowly: expanding its long list of abseil
# libraries took CMake 30-40 s here.
find_package(gRPC CONFIG QUIET)
if(gRPC_FOUND)
  set(GRPC_LIBRARIES gRPC::grpc++)
else()
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(GRPCPP REQUIRED IMPORTED_TARGET grpc++)
  set(GRPC_LIBRARIES PkgConfig::GRPCPP)
endif()
find_package(Protobuf REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
find_package(Threads REQUIRED)
