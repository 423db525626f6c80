// The part of OTF2's C API the OTF2 writer calls, declared here so that
// building rocprof-go needs no OTF2 headers: the library is opened with
// dlopen when -f otf2 asks for it (otf2_cgo.go).
//
// Copied from the headers of OTF2 3.0.2 (Debian bookworm,
// /usr/include/otf2/*.h: OTF2_GeneralDefinitions.h, OTF2_ErrorCodes.h,
// OTF2_Callbacks.h, OTF2_Definitions.h, OTF2_Archive.h, OTF2_EvtWriter.h,
// OTF2_GlobalDefWriter.h, OTF2_AttributeList.h); every declaration below is the same in OTF2 3.0.3
// (trixie) and 3.2 (sid, forky), whose library keeps the soname major 10.
// otf2_abi_test.go compiles these lists against the installed OTF2 headers:
// each type, constant, function signature and the flush-callback struct
// must match.
//
// Included with RPG_OTF2_SYSTEM_HEADERS defined (after <otf2/otf2.h>), the
// header declares only what OTF2 itself lacks: the lists and the
// rpg_otf2_* names.

#ifndef RPG_OTF2_API_H
#define RPG_OTF2_API_H

#include <stdbool.h>
#include <stdint.h>

// Opaque handles, with OTF2's own struct tags (an identical typedef may be
// repeated in C11, so these also compile next to OTF2's headers).
typedef struct OTF2_Archive_struct OTF2_Archive;
typedef struct OTF2_EvtWriter_struct OTF2_EvtWriter;
typedef struct OTF2_DefWriter_struct OTF2_DefWriter;
typedef struct OTF2_GlobalDefWriter_struct OTF2_GlobalDefWriter;
typedef struct OTF2_AttributeList_struct OTF2_AttributeList;

// RPG_OTF2_TYPES(X): X(underlying type, OTF2 name). OTF2_ErrorCode is an
// enum with negative members, which C compilers make an int.
#define RPG_OTF2_TYPES(X)                     \
	X(int, OTF2_ErrorCode)                    \
	X(uint64_t, OTF2_TimeStamp)               \
	X(uint8_t, OTF2_FileMode)                 \
	X(uint8_t, OTF2_FileSubstrate)            \
	X(uint8_t, OTF2_Compression)              \
	X(uint8_t, OTF2_FileType)                 \
	X(uint8_t, OTF2_FlushType)                \
	X(uint64_t, OTF2_LocationRef)             \
	X(uint32_t, OTF2_RegionRef)               \
	X(uint32_t, OTF2_StringRef)               \
	X(uint32_t, OTF2_SystemTreeNodeRef)       \
	X(uint32_t, OTF2_LocationGroupRef)        \
	X(uint8_t, OTF2_RegionRole)               \
	X(uint8_t, OTF2_Paradigm)                 \
	X(uint32_t, OTF2_RegionFlag)              \
	X(uint8_t, OTF2_LocationGroupType)        \
	X(uint8_t, OTF2_LocationType)             \
	X(uint32_t, OTF2_AttributeRef)            \
	X(uint8_t, OTF2_Type)

// RPG_OTF2_CONSTANTS(X): X(type, OTF2 name, value).
#define RPG_OTF2_CONSTANTS(X)                                                \
	X(OTF2_ErrorCode, OTF2_SUCCESS, 0)                                       \
	X(OTF2_FileMode, OTF2_FILEMODE_WRITE, 0)                                 \
	X(OTF2_FileSubstrate, OTF2_SUBSTRATE_POSIX, 1)                           \
	X(OTF2_Compression, OTF2_COMPRESSION_NONE, 1)                            \
	X(OTF2_FlushType, OTF2_FLUSH, 1)                                         \
	X(OTF2_RegionRole, OTF2_REGION_ROLE_FUNCTION, 1)                         \
	X(OTF2_Paradigm, OTF2_PARADIGM_USER, 1)                                  \
	X(OTF2_RegionFlag, OTF2_REGION_FLAG_NONE, 0)                             \
	X(OTF2_LocationGroupType, OTF2_LOCATION_GROUP_TYPE_PROCESS, 1)           \
	X(OTF2_LocationType, OTF2_LOCATION_TYPE_CPU_THREAD, 1)                   \
	X(OTF2_LocationType, OTF2_LOCATION_TYPE_ACCELERATOR_STREAM, 2)           \
	X(OTF2_TimeStamp, OTF2_UNDEFINED_TIMESTAMP, UINT64_MAX)                  \
	X(OTF2_SystemTreeNodeRef, OTF2_UNDEFINED_SYSTEM_TREE_NODE, UINT32_MAX)   \
	X(OTF2_LocationGroupRef, OTF2_UNDEFINED_LOCATION_GROUP, UINT32_MAX)      \
	X(OTF2_Type, OTF2_TYPE_STRING, 11)

#ifndef RPG_OTF2_SYSTEM_HEADERS
#define RPG_OTF2_TYPEDEF(type, name) typedef type name;
RPG_OTF2_TYPES(RPG_OTF2_TYPEDEF)
#undef RPG_OTF2_TYPEDEF
#define RPG_OTF2_CONSTANT(type, name, value) static const type name = (value);
RPG_OTF2_CONSTANTS(RPG_OTF2_CONSTANT)
#undef RPG_OTF2_CONSTANT
#endif

// The flush callbacks (OTF2_Callbacks.h: OTF2_PreFlushCallback,
// OTF2_PostFlushCallback, OTF2_FlushCallbacks).
typedef OTF2_FlushType (*rpg_otf2_pre_flush)(void *userData, OTF2_FileType fileType,
                                             OTF2_LocationRef location, void *callerData, bool final);
typedef OTF2_TimeStamp (*rpg_otf2_post_flush)(void *userData, OTF2_FileType fileType,
                                              OTF2_LocationRef location);
struct rpg_otf2_flush_callbacks {
	rpg_otf2_pre_flush otf2_pre_flush;
	rpg_otf2_post_flush otf2_post_flush;
};
#ifndef RPG_OTF2_SYSTEM_HEADERS
typedef struct rpg_otf2_flush_callbacks OTF2_FlushCallbacks;
#endif

// The memory callbacks (OTF2_Callbacks.h: OTF2_MemoryAllocate,
// OTF2_MemoryFreeAll, OTF2_MemoryCallbacks).
typedef void *(*rpg_otf2_allocate)(void *userData, OTF2_FileType fileType, OTF2_LocationRef location,
                                   void **perBufferData, uint64_t chunkSize);
typedef void (*rpg_otf2_free_all)(void *userData, OTF2_FileType fileType, OTF2_LocationRef location,
                                  void **perBufferData, bool final);
struct rpg_otf2_memory_callbacks {
	rpg_otf2_allocate otf2_allocate;
	rpg_otf2_free_all otf2_free_all;
};
#ifndef RPG_OTF2_SYSTEM_HEADERS
typedef struct rpg_otf2_memory_callbacks OTF2_MemoryCallbacks;
#endif

// RPG_OTF2_FUNCTIONS(X): X(return type, OTF2 function, (parameters)), every
// function the writer calls; the loader resolves each with dlsym.
#define RPG_OTF2_FUNCTIONS(X)                                                                              \
	X(OTF2_Archive *, OTF2_Archive_Open,                                                                   \
	  (const char *archivePath, const char *archiveName, const OTF2_FileMode fileMode,                      \
	   const uint64_t chunkSizeEvents, const uint64_t chunkSizeDefs,                                        \
	   const OTF2_FileSubstrate fileSubstrate, const OTF2_Compression compression))                         \
	X(OTF2_ErrorCode, OTF2_Archive_Close, (OTF2_Archive * archive))                                        \
	X(OTF2_ErrorCode, OTF2_Archive_SetFlushCallbacks,                                                      \
	  (OTF2_Archive * archive, const OTF2_FlushCallbacks *flushCallbacks, void *flushData))                 \
	X(OTF2_ErrorCode, OTF2_Archive_SetMemoryCallbacks,                                                     \
	  (OTF2_Archive * archive, const OTF2_MemoryCallbacks *memoryCallbacks, void *memoryData))              \
	X(OTF2_ErrorCode, OTF2_Archive_SetSerialCollectiveCallbacks, (OTF2_Archive * archive))                 \
	X(OTF2_ErrorCode, OTF2_Archive_OpenEvtFiles, (OTF2_Archive * archive))                                 \
	X(OTF2_ErrorCode, OTF2_Archive_CloseEvtFiles, (OTF2_Archive * archive))                                \
	X(OTF2_EvtWriter *, OTF2_Archive_GetEvtWriter, (OTF2_Archive * archive, OTF2_LocationRef location))    \
	X(OTF2_ErrorCode, OTF2_Archive_CloseEvtWriter, (OTF2_Archive * archive, OTF2_EvtWriter * writer))      \
	X(OTF2_ErrorCode, OTF2_Archive_OpenDefFiles, (OTF2_Archive * archive))                                 \
	X(OTF2_ErrorCode, OTF2_Archive_CloseDefFiles, (OTF2_Archive * archive))                                \
	X(OTF2_DefWriter *, OTF2_Archive_GetDefWriter, (OTF2_Archive * archive, OTF2_LocationRef location))    \
	X(OTF2_ErrorCode, OTF2_Archive_CloseDefWriter, (OTF2_Archive * archive, OTF2_DefWriter * writer))      \
	X(OTF2_GlobalDefWriter *, OTF2_Archive_GetGlobalDefWriter, (OTF2_Archive * archive))                   \
	X(OTF2_ErrorCode, OTF2_EvtWriter_Enter,                                                                \
	  (OTF2_EvtWriter * writer, OTF2_AttributeList * attributeList, OTF2_TimeStamp time,                   \
	   OTF2_RegionRef region))                                                                              \
	X(OTF2_ErrorCode, OTF2_EvtWriter_Leave,                                                                \
	  (OTF2_EvtWriter * writer, OTF2_AttributeList * attributeList, OTF2_TimeStamp time,                   \
	   OTF2_RegionRef region))                                                                              \
	X(OTF2_ErrorCode, OTF2_GlobalDefWriter_WriteClockProperties,                                           \
	  (OTF2_GlobalDefWriter * writerHandle, uint64_t timerResolution, uint64_t globalOffset,               \
	   uint64_t traceLength, uint64_t realtimeTimestamp))                                                   \
	X(OTF2_ErrorCode, OTF2_GlobalDefWriter_WriteString,                                                    \
	  (OTF2_GlobalDefWriter * writerHandle, OTF2_StringRef self, const char *string))                      \
	X(OTF2_ErrorCode, OTF2_GlobalDefWriter_WriteRegion,                                                    \
	  (OTF2_GlobalDefWriter * writerHandle, OTF2_RegionRef self, OTF2_StringRef name,                      \
	   OTF2_StringRef canonicalName, OTF2_StringRef description, OTF2_RegionRole regionRole,                \
	   OTF2_Paradigm paradigm, OTF2_RegionFlag regionFlags, OTF2_StringRef sourceFile,                      \
	   uint32_t beginLineNumber, uint32_t endLineNumber))                                                   \
	X(OTF2_ErrorCode, OTF2_GlobalDefWriter_WriteSystemTreeNode,                                            \
	  (OTF2_GlobalDefWriter * writerHandle, OTF2_SystemTreeNodeRef self, OTF2_StringRef name,              \
	   OTF2_StringRef className, OTF2_SystemTreeNodeRef parent))                                            \
	X(OTF2_ErrorCode, OTF2_GlobalDefWriter_WriteLocationGroup,                                             \
	  (OTF2_GlobalDefWriter * writerHandle, OTF2_LocationGroupRef self, OTF2_StringRef name,               \
	   OTF2_LocationGroupType locationGroupType, OTF2_SystemTreeNodeRef systemTreeParent,                   \
	   OTF2_LocationGroupRef creatingLocationGroup))                                                        \
	X(OTF2_ErrorCode, OTF2_GlobalDefWriter_WriteLocation,                                                  \
	  (OTF2_GlobalDefWriter * writerHandle, OTF2_LocationRef self, OTF2_StringRef name,                    \
	   OTF2_LocationType locationType, uint64_t numberOfEvents, OTF2_LocationGroupRef locationGroup))      \
	X(OTF2_ErrorCode, OTF2_GlobalDefWriter_WriteAttribute,                                                 \
	  (OTF2_GlobalDefWriter * writerHandle, OTF2_AttributeRef self, OTF2_StringRef name,                   \
	   OTF2_StringRef description, OTF2_Type type))                                                         \
	X(OTF2_AttributeList *, OTF2_AttributeList_New, (void))                                                \
	X(OTF2_ErrorCode, OTF2_AttributeList_Delete, (OTF2_AttributeList * attributeList))                     \
	X(OTF2_ErrorCode, OTF2_AttributeList_RemoveAllAttributes, (OTF2_AttributeList * attributeList))        \
	X(OTF2_ErrorCode, OTF2_AttributeList_AddStringRef,                                                     \
	  (OTF2_AttributeList * attributeList, OTF2_AttributeRef attribute, OTF2_StringRef stringRef))

#endif
